"""One topic's write: the topic znode and its exact-origins record, as one ZooKeeper multi, and
what of a set of moves fits in it. Pure.

ZooKeeper takes a request of at most 1 MiB (``jute.maxbuffer``); a bigger one drops the
connection. A topic with many partitions, or long broker ids, can reach that when many of its
partitions move at once (each move lists its adding and removing replicas and records its
replicas before the move). Rather than fail the event on every attempt, the moves that would not
fit are refused, per partition, and the others proceed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.zk import admin_codec, codec
from reassignd.zk.client import MAX_REQUEST_BYTES

# What one multi of a topic znode and its origins record may carry in data: the packet limit
# less the request framing, the two paths and the fencing check (a few hundred bytes at most).
WRITE_BUDGET_BYTES = MAX_REQUEST_BYTES - 8 * 1024


def topic_znode(merged: Mapping[int, ReplicaAssignment], topic_id: str) -> codec.TopicZnode:
    return codec.TopicZnode(
        {p: a.replicas for p, a in merged.items()},
        {p: a.adding for p, a in merged.items() if a.adding},
        {p: a.removing for p, a in merged.items() if a.removing},
        topic_id,
    )


def origins_after(
    origins: Mapping[int, tuple[int, ...]],
    before: Mapping[int, ReplicaAssignment],
    after: Mapping[int, ReplicaAssignment],
) -> dict[int, tuple[int, ...]]:
    """A topic's origins once ``after`` is written: a partition that starts moving records its
    replicas as they were (in their order); one moving already keeps its record (a re-target is
    relative to the same origin); one that stops moving drops it."""
    out = dict(origins)
    for p, a in after.items():
        if not a.is_being_reassigned:
            out.pop(p, None)
            continue
        if p not in out:
            old = before.get(p)
            out[p] = old.replicas if old is not None and not old.is_being_reassigned else a.origins
    return out


def write_bytes(
    before: Mapping[int, ReplicaAssignment],
    origins: Mapping[int, tuple[int, ...]],
    parts: Mapping[int, ReplicaAssignment],
    topic_id: str,
) -> int:
    """The data bytes of the topic's write once ``parts`` are applied (topic znode + origins)."""
    merged = {**before, **parts}
    size = len(codec.encode_topic(topic_znode(merged, topic_id)))
    after = origins_after(origins, before, parts)
    if after:
        size += len(admin_codec.encode_origins(after))
    return size


# The JSON around the entries: '{"version":3,"partitions":{},"adding_replicas":{},
# "removing_replicas":{},"topic_id":""}' and '{"version":1,"partitions":{}}', rounded up.
_FRAME_BYTES = 192
_ENTRY_BYTES = 6  # '"":[],' around one entry's key digits and ids
_ESCAPED_CHAR_BYTES = 6  # the most a string's character takes in JSON ('\\u001f')


def _widest(numbers: Iterable[object]) -> int | None:
    """The most characters any of ``numbers`` takes in JSON (a sign included); None when they
    are not all ints (a bool or a float is written otherwise: only an exact encoding can tell)."""
    values = list(numbers)
    if not values:
        return 1
    if not set(map(type, values)) <= {int}:
        return None
    return max(len(str(min(values))), len(str(max(values))))  # type: ignore[type-var]  # ints, checked


def write_bytes_bound(
    before: Mapping[int, ReplicaAssignment],
    origins: Mapping[int, tuple[int, ...]],
    parts: Mapping[int, ReplicaAssignment],
    topic_id: str,
) -> int | None:
    """At least :func:`write_bytes` for the same arguments, counted from the lists' lengths
    without encoding (a hundred moving partitions: about 7 times cheaper than the exact encodings);
    None when it cannot vouch for its bound (ids that are not ints)."""
    merged = {**before, **parts}
    after = origins_after(origins, before, parts)
    lists = [
        *(a.replicas for a in merged.values()),
        *(a.adding for a in merged.values() if a.adding),
        *(a.removing for a in merged.values() if a.removing),
        *after.values(),
    ]
    key_width = _widest(chain(merged, after))
    id_width = _widest(chain.from_iterable(lists))
    if key_width is None or id_width is None:
        return None
    ids = sum(map(len, lists))
    return (
        _FRAME_BYTES
        + _ESCAPED_CHAR_BYTES * len(topic_id)
        + len(lists) * (key_width + _ENTRY_BYTES)
        + ids * (id_width + 1)
    )


@dataclass(frozen=True, slots=True)
class Fit:
    accepted: dict[int, ReplicaAssignment]
    refused: tuple[int, ...]  # partitions whose move would not fit, in the order given
    # the write's data bytes with everything given (the reason's figure): exact when something
    # is refused, else at most this (an upper bound vouched for everything)
    size: int


def _grows(before: ReplicaAssignment | None, after: ReplicaAssignment) -> bool:
    if before is None:
        return True
    listed = len(after.replicas) + len(after.adding) + len(after.removing)
    was = len(before.replicas) + len(before.adding) + len(before.removing)
    return listed > was or (after.is_being_reassigned and not before.is_being_reassigned)


def fit(
    before: Mapping[int, ReplicaAssignment],
    origins: Mapping[int, tuple[int, ...]],
    parts: Mapping[int, ReplicaAssignment],
    topic_id: str,
    budget: int = WRITE_BUDGET_BYTES,
) -> Fit:
    """What of ``parts`` (one topic's new assignments, in request order) fits in one write. Every
    change that does not grow the znode (a cancel, a completion) is kept; of the others, the
    longest prefix that fits (found by bisection over exact encodings). A write whose upper
    bound fits is not encoded here at all: an API move of 10,000 partitions asks this twice per
    topic before its writes, and the exact encodings (each with its self-check) were a fifth of
    the request's CPU."""
    bound = write_bytes_bound(before, origins, parts, topic_id)
    if bound is not None and bound <= budget:
        return Fit(dict(parts), (), bound)
    size = write_bytes(before, origins, parts, topic_id)
    if size <= budget:
        return Fit(dict(parts), (), size)
    keep = {p: a for p, a in parts.items() if not _grows(before.get(p), a)}
    growing: Sequence[int] = [p for p in parts if p not in keep]

    def fits(n: int) -> bool:
        chosen = {**keep, **{p: parts[p] for p in growing[:n]}}
        return write_bytes(before, origins, chosen, topic_id) <= budget

    low, high = 0, len(growing)  # fits(low) is assumed; fits(high) is known false
    if not fits(0):
        return Fit({}, tuple(parts), size)
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    chosen = set(growing[:low])
    accepted = {p: a for p, a in parts.items() if p in keep or p in chosen}
    return Fit(accepted, tuple(p for p in parts if p not in accepted), size)
