"""Following ``/config/changes``: Kafka's ``ZkNodeChangeNotificationListener``, for quotas.

Every writer of an entity config (``kafka-configs``, Kafka's admin API, :func:`alter_quota`)
creates a persistent-sequential ``/config/changes/config_change_<seq>`` naming the entity. The
reader remembers the last sequence number it processed and, when the children watch fires,
returns the entity paths named by newer notifications; the caller re-reads those entities
(:func:`reread_quota_entities`). Notifications are not deleted when processed: as Kafka does,
they are purged once older than 15 minutes. ZooKeeper's stat as the client exposes it has no
creation time, so age counts from when this reader first saw a notification — never earlier
than Kafka would purge it.

Watch callbacks carry no data; the reader always lists the children again, so duplicate or
coalesced notifications are harmless, and a missed one is caught up by the next.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from reassignd.quotas.config_store import (
    Report,
    apply_quota_updates,
    log_problem,
    parse_entity_path,
    read_quota_entities,
)
from reassignd.quotas.entities import ConfigKey
from reassignd.zk import paths
from reassignd.zk.admin_codec import decode_config_change
from reassignd.zk.codec import CodecError
from reassignd.zk.errors import NoNodeError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import WatchCallback

KIND = "config_change"  # the ``kind`` of reports about malformed notifications
PURGE_AFTER_S = 15 * 60.0  # Kafka's ZkNodeChangeNotificationListener changeExpirationMs

_PREFIX = paths.basename(paths.CONFIG_CHANGE_PREFIX)  # "config_change_"


def change_number(name: str) -> int | None:
    """``config_change_0000000012`` → 12; None for a name that is not a notification."""
    suffix = name[len(_PREFIX) :] if name.startswith(_PREFIX) else ""
    return int(suffix) if suffix.isascii() and suffix.isdigit() else None


@dataclass(frozen=True, slots=True)
class ConfigChanges:
    """What newer notifications named, in sequence order, each entity path once."""

    entity_paths: tuple[str, ...]  # e.g. "users/alice/clients/app", "topics/orders"
    last_seq: int  # the last sequence number processed (-1: none yet)
    purged: tuple[str, ...] = ()  # notification znodes deleted as obsolete

    @property
    def quota_entities(self) -> tuple[ConfigKey, ...]:
        """The quota entities among ``entity_paths`` (users, clients, users' clients)."""
        return tuple(key for p in self.entity_paths if (key := parse_entity_path(p)) is not None)


class ChangeWrites(Protocol):
    """The writing side of the reader: the active controller's, for one event — its listing
    re-creates a deleted ``/config/changes``, its purge deletes are fenced (through the event's
    fenced writes). A reader given none only reads (through its ZkReads port): it lists plainly
    and purges nothing."""

    async def children(self, path: str, watch: WatchCallback | None) -> list[str]: ...

    async def delete(self, path: str) -> None:
        """Delete ``path`` (one already gone is fine)."""
        ...


class ConfigChangeReader:
    """Reads ``/config/changes`` newer than the last processed notification. Not thread-safe;
    one owner (the controller's event loop) calls it."""

    def __init__(self, report: Report = log_problem, purge_after_s: float | None = PURGE_AFTER_S) -> None:
        self.report = report
        self.purge_after_s = purge_after_s  # None: never delete notifications (a standby)
        self.last_seq = -1
        self._first_seen_s: dict[str, float] = {}

    async def skip_existing(
        self,
        reads: ZkReads,
        now_s: float,
        watch: WatchCallback | None = None,
        writes: ChangeWrites | None = None,
    ) -> int:
        """Mark every current notification as processed (before a full config load, which
        covers them) and arm ``watch``; returns the last sequence number."""
        names = await self._list(reads, now_s, watch, writes)
        numbers = [n for name in names if (n := change_number(name)) is not None]
        self.last_seq = max([self.last_seq, *numbers])
        return self.last_seq

    async def read(
        self,
        reads: ZkReads,
        now_s: float,
        watch: WatchCallback | None = None,
        writes: ChangeWrites | None = None,
    ) -> ConfigChanges:
        """The entity paths named by notifications newer than ``last_seq`` (which advances past
        them, malformed ones included — reported), then the purge of obsolete notifications
        (through ``writes``; without them, none). Arms ``watch`` on the children of
        /config/changes. Raises ZkError."""
        names = await self._list(reads, now_s, watch, writes)
        newer = sorted(
            (n, name) for name in names if (n := change_number(name)) is not None and n > self.last_seq
        )
        znodes = await reads.get_many([paths.config_change(name) for _, name in newer])
        entity_paths: dict[str, None] = {}
        for (n, name), znode in zip(newer, znodes, strict=True):
            self.last_seq = max(self.last_seq, n)
            if znode is None:
                continue  # purged meanwhile by another reader: its entity was re-read then
            try:
                entity = decode_config_change(znode.data)
            except CodecError as e:
                self.report(paths.config_change(name), e.reason, KIND)
                continue
            if entity.split("/", 1)[0] in ("users", "clients") and parse_entity_path(entity) is None:
                self.report(paths.config_change(name), f"names {entity!r}, not a quota entity: ignored", KIND)
                continue
            entity_paths[entity] = None
        purged = await self._purge(names, now_s, writes)
        return ConfigChanges(tuple(entity_paths), self.last_seq, purged)

    async def _list(
        self, reads: ZkReads, now_s: float, watch: WatchCallback | None, writes: ChangeWrites | None
    ) -> list[str]:
        names: list[str] = []
        if writes is not None:
            names = await writes.children(paths.CONFIG_CHANGES, watch)
        for _ in range(0 if writes is not None else 3):
            try:
                names = await reads.children(paths.CONFIG_CHANGES, watch=watch)
                break
            except NoNodeError:
                # Missing: an exists watch fires when it is created; if it was created just now,
                # list it again (arming the children watch).
                if watch is None or await reads.exists(paths.CONFIG_CHANGES, watch=watch) is None:
                    break
        seen = self._first_seen_s
        self._first_seen_s = {name: seen.get(name, now_s) for name in names}
        return names

    async def _purge(self, names: list[str], now_s: float, writes: ChangeWrites | None) -> tuple[str, ...]:
        if self.purge_after_s is None or writes is None:
            return ()
        purged: list[str] = []
        for name in sorted(names):
            n = change_number(name)
            if n is None or n > self.last_seq or now_s - self._first_seen_s[name] < self.purge_after_s:
                continue
            await writes.delete(paths.config_change(name))
            self._first_seen_s.pop(name, None)
            purged.append(paths.config_change(name))
        return tuple(purged)


async def reread_quota_entities(
    reads: ZkReads, changes: ConfigChanges, quotas: Mapping[ConfigKey, float], report: Report = log_problem
) -> dict[ConfigKey, float]:
    """``quotas`` updated from ZooKeeper for the quota entities ``changes`` names (re-read at the
    paths the notifications name); raises ZkError."""
    updates = await read_quota_entities(reads, changes.entity_paths, report)
    return apply_quota_updates(quotas, updates)
