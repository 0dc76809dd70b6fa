"""The KIP-73 throttles batches own, set and restored in the entity configs (the shell around
``executor/throttles.py``, which says what and why).

Another tool may have written a config this code cannot use: a value that is not a string, a
version other than 1, bytes that are no JSON. Such an entity is left alone and reported (a
log line naming the znode and why, a problem in ``GET /v1/status``): the batch neither throttles it nor, while it stays
so, restores it (its record is kept for when it can be read again); every other entity is
handled as usual, and nothing is raised out of the event. A write that would take a config past
ZooKeeper's limit is refused the same way. A restore never creates a config: a topic gone (or
being deleted) or a config znode gone has nothing to restore, and its record is forgotten; a
throttle is set on a topic's config only while the topic's znode exists (checked in the write's
multi), so a topic another tool deleted does not get its config back either way.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.effects.fenced_writes import Refused
from reassignd.controller.model.moves import Move, of_batch
from reassignd.controller.reads import loader
from reassignd.controller.state.context import ControllerContext
from reassignd.executor import lifecycle
from reassignd.executor.model import Batch, ThrottleValues
from reassignd.executor.throttle_records import record_fits
from reassignd.executor.throttles import (
    BROKER_KEYS,
    FOLLOWER_REPLICAS,
    LEADER_REPLICAS,
    TOPIC_KEYS,
    RunningCopy,
    merged_replicas,
    owned_elsewhere,
    rate_value,
    wanted,
)
from reassignd.executor.znode_size import ZNODE_LIMIT_BYTES
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.errors import BadVersionError, MultiFailedError, NodeExistsError, NoNodeError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import Check, Create, Op, SetData

log = logging.getLogger(__name__)

_WRITE_ATTEMPTS = 5
KIND = "entity_config"


@dataclass(frozen=True, slots=True)
class ThrottleConfig:
    values: dict[str, str]
    version: int | None  # None: no znode


class ThrottleWrite(enum.Enum):
    DONE = "done"  # written, or nothing to change
    GONE = "gone"  # no znode, and none made
    UNUSABLE = "unusable"  # undecodable or too large: left alone, reported


class BatchThrottles:
    def __init__(
        self,
        reads: ZkReads,
        ctx: ControllerContext,
        report: loader.Report,
        now_ms: Callable[[], int],
        batches: Callable[[], Mapping[str, Batch]],
        update: Callable[[Batch, EventOutputs], Awaitable[bool]],
    ) -> None:
        self.reads = reads
        self.ctx = ctx
        self._report = report
        self._now_ms = now_ms
        self._batches = batches
        self._update = update  # journals a batch (False: it could not be written, reported)

    async def run(self, out: EventOutputs) -> None:
        """Every batch's throttles as its running moves need them (the moves each batch runs, as
        their records say: ``Move.batch``)."""
        by_batch: dict[str, dict[TopicPartition, Move]] | None = None
        for batch_id in sorted(self._batches()):
            if (b := self._batches().get(batch_id)) is None:
                continue
            if by_batch is None and b.spec.throttle_bytes_per_s is not None and b.state.unfinished:
                # only a batch that throttles its running moves needs them: every move is
                # walked once, not on every event of a controller without such a batch
                by_batch = of_batch(self.ctx.moves)
            await self._throttles(b, {} if by_batch is None else by_batch.get(batch_id, {}), out)

    async def _throttles(self, b: Batch, moves: Mapping[TopicPartition, Move], out: EventOutputs) -> None:
        """Set (the previous values journaled first), or restored (the config first, then the
        journal forgets them)."""
        rate = b.spec.throttle_bytes_per_s
        if (rate is None or not b.state.unfinished) and not b.broker_throttles and not b.topic_throttles:
            return  # nothing set, nothing to restore
        running: list[RunningCopy] = []
        if rate is not None and b.state.unfinished:
            for tp in moves:
                a = self.ctx.assignment(tp)
                if a is not None:
                    running.append(RunningCopy(tp, a.origins, a.adding))
        w = wanted(running)
        other_brokers, other_topics = owned_elsewhere(
            (o.broker_throttles, o.topic_throttles)
            for o in self._batches().values()
            if o.batch_id != b.batch_id
        )
        brokers = sorted(w.brokers - other_brokers)
        topics = sorted(set(w.leader_entries) | set(w.follower_entries))
        configs: dict[str, ThrottleConfig | None] = {}
        for path in [*map(paths.config_broker, brokers), *map(paths.config_topic, topics)]:
            configs[path] = await self._read_config(path, "the batch does not throttle it")
        record_brokers: dict[int, ThrottleValues] = {}
        for broker in brokers:
            path = paths.config_broker(broker)
            if broker not in b.broker_throttles and (c := configs[path]) is not None:
                values = {k: c.values.get(k) for k in BROKER_KEYS}
                if self._fits(path, broker, values):
                    record_brokers[broker] = values
        record_topics: dict[str, ThrottleValues] = {}
        for topic in topics:
            path = paths.config_topic(topic)
            if (
                topic not in b.topic_throttles
                and topic not in other_topics
                and (c := configs[path]) is not None
            ):
                values = {k: c.values.get(k) for k in TOPIC_KEYS}
                if self._fits(path, topic, values):
                    record_topics[topic] = values
        now = self._now_ms()
        if (record_brokers or record_topics) and not await self._update(
            lifecycle.throttles_recorded(b, record_brokers, record_topics, now), out
        ):
            return  # nothing set that is not recorded
        b = self._batches()[b.batch_id]
        if rate is not None:
            for broker in brokers:
                if broker in b.broker_throttles and configs[paths.config_broker(broker)] is not None:
                    value = rate_value(rate)
                    await self._write_config(
                        paths.config_broker(broker), dict.fromkeys(BROKER_KEYS, value), out
                    )
        for topic in topics:
            path = paths.config_topic(topic)
            config = configs[path]
            if config is None or (topic not in b.topic_throttles and topic not in other_topics):
                continue  # unusable, or its record did not fit: left alone
            changes: dict[str, str | None] = {}
            for key, entries in (
                (LEADER_REPLICAS, w.leader_entries),
                (FOLLOWER_REPLICAS, w.follower_entries),
            ):
                listed = merged_replicas(config.values.get(key), entries.get(topic, frozenset()))
                if listed is not None:
                    changes[key] = listed
            if changes:  # never into the config of a topic deleted meanwhile
                await self._write_config(path, changes, out, requires=paths.topic(topic))
        await self._restore(b, w.brokers, set(topics), out)

    async def _restore(
        self, b: Batch, brokers_wanted: frozenset[int], topics_wanted: set[str], out: EventOutputs
    ) -> None:
        """What no running move needs any more goes back to the recorded values."""
        rate = b.spec.throttle_bytes_per_s
        ours = rate_value(rate) if rate is not None else None
        done_brokers: list[int] = []
        done_topics: list[str] = []
        for broker in sorted(set(b.broker_throttles) - brokers_wanted):
            path = paths.config_broker(broker)
            config = await self._read_config(path, "the batch cannot restore its throttle yet")
            if config is None:
                continue
            previous = b.broker_throttles[broker]
            changes = {
                k: previous.get(k) for k in BROKER_KEYS if ours is not None and config.values.get(k) == ours
            }
            if (
                config.version is None
                or await self._write_config(path, changes, out, create=False) is not ThrottleWrite.UNUSABLE
            ):
                done_brokers.append(broker)
        for topic in sorted(set(b.topic_throttles) - topics_wanted):
            path = paths.config_topic(topic)
            if topic not in self.ctx.assignments or topic in self.ctx.topics_to_delete:
                log.info("batch %s: topic %s is gone, its throttle record is forgotten", b.batch_id, topic)
                done_topics.append(topic)
            elif (
                await self._write_config(path, dict(b.topic_throttles[topic]), out, create=False)
                is not ThrottleWrite.UNUSABLE
            ):
                done_topics.append(topic)
        if done_brokers or done_topics:
            restored = lifecycle.throttles_restored(b, done_brokers, done_topics, self._now_ms())
            if await self._update(restored, out):
                log.info(
                    "batch %s restored the throttles of brokers %s, topics %s",
                    b.batch_id,
                    done_brokers,
                    done_topics,
                )

    def _fits(self, path: str, key: str | int, values: Mapping[str, str | None]) -> bool:
        if record_fits(key, values):
            return True
        self._report(
            path, "its throttle values are too large to record; the batch does not throttle it", KIND
        )
        return False

    async def _read_config(self, path: str, consequence: str) -> ThrottleConfig | None:
        """An entity config; None when it cannot be decoded (reported with ``consequence``)."""
        znode = await self.reads.get_or_none(path)
        if znode is None:
            return ThrottleConfig({}, None)
        if not znode.data:
            return ThrottleConfig({}, znode.stat.version)
        try:
            return ThrottleConfig(dict(admin_codec.decode_entity_config(znode.data)), znode.stat.version)
        except codec.CodecError as e:
            self._report(path, f"{e.reason}; {consequence}", KIND)
            return None

    async def _write_config(
        self,
        path: str,
        changes: Mapping[str, str | None],
        out: EventOutputs,
        *,
        create: bool = True,
        requires: str | None = None,
    ) -> ThrottleWrite:
        """Merge ``changes`` (None: remove the key) into an entity config at the version read,
        with a config change notification (Kafka's tools and brokers follow it), fenced; read
        again on a race. Without ``create``, an absent config stays absent; with ``requires``,
        nothing is written unless that znode (the topic's) exists, checked in the same multi."""
        if not changes:
            return ThrottleWrite.DONE
        notification = admin_codec.encode_config_change(paths.entity_path(path))
        for _ in range(_WRITE_ATTEMPTS):
            config = await self._read_config(path, "the batch leaves its throttles alone")
            if config is None:
                return ThrottleWrite.UNUSABLE
            if config.version is None and not create:
                return ThrottleWrite.GONE
            new = dict(config.values)
            for key, value in changes.items():
                if value is None:
                    new.pop(key, None)
                else:
                    new[key] = value
            if new == config.values:
                return ThrottleWrite.DONE
            try:
                data = admin_codec.encode_entity_config(new)
            except ValueError as e:
                self._report(path, f"the batch's throttles cannot be written: {e}", KIND)
                return ThrottleWrite.UNUSABLE
            if len(data) > ZNODE_LIMIT_BYTES:
                self._report(
                    path, f"with the batch's throttles it would be {len(data)} bytes; left alone", KIND
                )
                return ThrottleWrite.UNUSABLE
            write: Op = Create(path, data) if config.version is None else SetData(path, data, config.version)
            guard: list[Op] = [] if requires is None else [Check(requires, -1)]
            outcome = await out.writes.write(
                [*guard, write, Create(paths.CONFIG_CHANGE_PREFIX, notification, sequential=True)],
                expect=(BadVersionError, NodeExistsError) + ((NoNodeError,) if guard else ()),
            )
            match outcome:
                case Refused(index=0, error=NoNodeError()) if guard:
                    return ThrottleWrite.GONE
                case Refused(error=BadVersionError() | NodeExistsError()):
                    continue  # changed meanwhile: read again
                case Refused(error=error):  # a NoNodeError of the write itself
                    raise MultiFailedError(outcome.index, error)
            return ThrottleWrite.DONE
        log.warning("%s kept changing while a batch wrote its throttles: tried again at the next event", path)
        return ThrottleWrite.UNUSABLE
