"""Read answers encoded once and served as bytes while what they show has not changed.

The controller publishes an immutable snapshot after every event, and parts of it (the
reassignments, the topics, each topic's view) are shared from one snapshot to the next until
they change. An answer built from such parts is kept encoded with the parts it was built from
(held, and compared by identity, never by ``id()``), under a key naming the endpoint and the
query parameters that change it: a request that finds the same parts is answered with the same
bytes, whatever the size of the cluster. A new part (a new snapshot's) builds the answer again.
The caller's role does not enter the key: it decides whether a read is allowed, never what it
answers.

Each kept answer has an ETag (this process's random tag and the entry's number): a request whose
``If-None-Match`` names it is answered 304 without a body.

``reassignd.agent_reports.fetch.SharedReports`` lets concurrent requests share one round of questions to the broker
agents: a request arriving while the same agents are being asked waits for those answers
instead of asking again (progress is as fresh as one round trip to the agents, as before).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Container, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import msgspec
from aiohttp import web

MAX_ENTRIES = 256  # oldest first out: distinct query strings cannot grow the cache without bound

_ENCODER = msgspec.json.Encoder()

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EncodedAnswer:
    body: bytes
    etag: str


class AnswerCache:
    """Encoded answers by key, each valid while its sources are the very same objects."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._max = max_entries
        self._entries: dict[Hashable, tuple[tuple[object, ...], object]] = {}
        self._tag = secrets.token_hex(4)  # a restarted process never reuses an ETag
        self._built = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def built(self) -> int:
        """How many answers were encoded so far (``get``): a hit encodes none."""
        return self._built

    def get(
        self,
        key: Hashable,
        sources: tuple[object, ...],
        build: Callable[[], object],
        *,
        keep: bool = True,
    ) -> EncodedAnswer:
        """The answer under ``key`` built from ``sources``: kept bytes if the kept entry was built
        from the same objects, else ``build()`` encoded now (and kept, unless ``keep`` is false:
        sources already replaced by newer ones must not evict the newer answer)."""
        return self.value(key, sources, lambda: self._encode(build()), keep=keep)

    def value(
        self, key: Hashable, sources: tuple[object, ...], build: Callable[[], T], *, keep: bool = True
    ) -> T:
        """Any value derived from ``sources`` alone (e.g. a selection the answer is built from),
        kept as an answer is."""
        entry = self._entries.get(key)
        if entry is not None and _same(entry[0], sources):
            return cast(T, entry[1])
        value = build()
        if not keep:
            return value
        if entry is None and len(self._entries) >= self._max:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = (sources, value)
        return value

    def _encode(self, body: object) -> EncodedAnswer:
        self._built += 1
        return EncodedAnswer(_ENCODER.encode(body), self._etag())

    def _etag(self) -> str:
        return f'"{self._tag}-{self._built}"'


def _same(kept: tuple[object, ...], sources: tuple[object, ...]) -> bool:
    return len(kept) == len(sources) and all(a is b for a, b in zip(kept, sources, strict=True))


def encoded_response(request: web.Request, encoded: EncodedAnswer) -> web.Response:
    """200 with the kept bytes and their ETag, or 304 when ``If-None-Match`` names that ETag."""
    headers = {"ETag": encoded.etag}
    if _matches(request.headers.get("If-None-Match"), encoded.etag):
        return web.Response(status=304, headers=headers)
    return web.Response(body=encoded.body, headers=headers, content_type="application/json")


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    tags = (tag.strip() for tag in if_none_match.split(","))
    return any(tag == "*" or tag.removeprefix("W/") == etag for tag in tags)


class Parts:
    """JSON values kept encoded per object (compared by identity), for an answer assembled from
    many parts: a rebuild encodes only the parts that are new objects (the publisher keeps a
    moving partition's view object while it does not change)."""

    def __init__(self) -> None:
        self._kept: dict[Hashable, tuple[object, msgspec.Raw]] = {}

    def __len__(self) -> int:
        return len(self._kept)

    def part(self, key: Hashable, source: object, build: Callable[[], Any]) -> msgspec.Raw:
        kept = self._kept.get(key)
        if kept is not None and kept[0] is source:
            return kept[1]
        raw = msgspec.Raw(_ENCODER.encode(build()))
        self._kept[key] = (source, raw)
        return raw

    def prune(self, live: Container[Hashable], at_most: int) -> None:
        """Forget the parts whose key is not ``live`` once more than ``at_most`` are kept."""
        if len(self._kept) > at_most:
            self._kept = {k: v for k, v in self._kept.items() if k in live}
