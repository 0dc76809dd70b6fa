"""The agent's replica manager: the replicas it hosts and what control requests do to them.

No I/O and no clock: the shell (control.py, fetcher.py, isr.py, agent.py) passes ``now`` and does
every await itself. No method awaits, so each one runs atomically on the event loop.

A full LeaderAndIsr (KIP-516, protocol.py's docstring) may come in chunks: the manager gathers the
partitions a set names under its key (controller epoch, broker epoch, set id) and, when the chunk
that completes it has been applied, deletes every hosted replica the set does not name (nor an
incremental LeaderAndIsr applied while the set was incomplete, nor one of its ``kept_topics``).

Every change of a replica goes through :meth:`ReplicaManager.put` / :meth:`ReplicaManager.remove`,
which keep the indices that make the agent's work proportional to what changes rather than to what
it hosts: the partitions followed per leader, the led ones, the led ones that grow, per topic; and
what changed since the fetchers and the ISR manager last looked (``fetch_dirty``,
``isr_candidates``, each leader-side fetch session's ``dirty``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from msgspec.structs import replace

from reassignd.broker import replica as rm
from reassignd.broker.bandwidth import FairBucket
from reassignd.broker.log_dir_store import LogDirStore
from reassignd.broker.log_dirs import LogDirSpec
from reassignd.broker.replica import Replica, ReplicaRole
from reassignd.broker.sim_config import BrokerSimConfig, TopicSimConfig, topic_sim_config
from reassignd.control.fetch import FENCED_LEADER_EPOCH
from reassignd.control.log_dir_moves import AgentLogDirMoveResult, AlterLogDirsRequest, AlterLogDirsResponse
from reassignd.control.protocol import (
    ControlResponse,
    Header,
    LeaderAndIsrRequest,
    LiveBroker,
    PartitionError,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from reassignd.control.replicas_report import ReplicaInfo, ReplicasReport
from reassignd.control.wire import (
    NONE,
    STALE_BROKER_EPOCH,
    STALE_CONTROLLER_EPOCH,
    UNKNOWN_TOPIC_OR_PARTITION,
)
from reassignd.topic_partition import TopicPartition

NO_EPOCH = -1  # StopReplica sentinels that bypass the leader-epoch check (Kafka's NoEpoch,
EPOCH_DURING_DELETE = -2  # EpochDuringDelete)


ServedKey = tuple[TopicPartition, int]  # (partition, follower): what a leader serves


def inbound_bucket(config: BrokerSimConfig, now: float) -> FairBucket[TopicPartition]:
    """The follower side: the broker's bandwidth in, with the follower throttle."""
    return FairBucket(config.replication_bytes_per_s, config.follower_throttled_rate, now)


def outbound_bucket(config: BrokerSimConfig, now: float) -> FairBucket[ServedKey]:
    """The leader side: the broker's bandwidth out, with the leader throttle."""
    return FairBucket(config.replication_bytes_per_s, config.leader_throttled_rate, now)


@dataclass(slots=True)
class PendingFull:
    """A full LeaderAndIsr set being received: what its chunks so far named."""

    key: tuple[int, int, int]  # (controller epoch, broker epoch, set id)
    total_partitions: int
    named: set[TopicPartition] = field(default_factory=set)
    kept_topics: set[str] = field(default_factory=set)
    touched: set[TopicPartition] = field(default_factory=set)  # by incremental requests meanwhile


@dataclass(slots=True)
class LeaderSession:
    """The leader's side of one follower's incremental fetch session (sessions.py): the
    partitions in it (with the leader epoch the follower last gave), the time of its latest fetch,
    and the partitions the follower must hear about at its next fetch even if it does not list them.
    """

    session_id: int
    epoch: int
    last_fetch_s: float
    partitions: dict[TopicPartition, int] = field(default_factory=dict)
    unserved: set[TopicPartition] = field(default_factory=set)  # refused at their latest listing
    dirty: set[TopicPartition] = field(default_factory=set)


def control_url(endpoints: Iterable[str]) -> str | None:
    """``http://host:port`` of the CONTROL listener, else of PLAINTEXT (same port in our agents)."""
    by_listener: dict[str, str] = {}
    for ep in endpoints:
        listener, sep, address = ep.partition("://")
        if sep:
            by_listener[listener] = address
    chosen = by_listener.get("CONTROL") or by_listener.get("PLAINTEXT")
    return None if chosen is None else f"http://{chosen}"


class ReplicaManager:
    def __init__(
        self,
        broker_id: int,
        *,
        replication_bytes_per_s: float,
        default_produce_bytes_per_s: float = 0.0,
        log_dirs: tuple[LogDirSpec, ...] | None = None,
        now: float,
    ) -> None:
        self.broker_id = broker_id
        self.dirs = LogDirStore(log_dirs, broker_id)
        self._replicas: dict[TopicPartition, Replica] = {}
        self.controller_epoch = -1  # the highest seen
        self.broker_epoch: int | None = None  # the registration's czxid, once registered
        self.live_brokers: frozenset[int] | None = None  # None until an UpdateMetadata
        self.endpoints: dict[int, str] = {}  # broker id -> control URL
        self.default_produce_bytes_per_s = default_produce_bytes_per_s
        self.flag_replication_bytes_per_s = replication_bytes_per_s
        self.topic_configs: dict[str, TopicSimConfig] = {}
        self._default_topic_config = topic_sim_config(None, default_produce_bytes_per_s)
        self.broker_config = BrokerSimConfig(replication_bytes_per_s)
        self.inbound = inbound_bucket(self.broker_config, now)  # shared by every partition followed
        self.outbound = outbound_bucket(self.broker_config, now)  # by every (partition, follower) served
        # indices (kept by put/remove)
        self.followed: dict[int, set[TopicPartition]] = {}  # leader -> partitions fetched from it
        self.led: set[TopicPartition] = set()
        self.growing: set[TopicPartition] = set()  # led, and the topic's produce rate is > 0
        self._by_topic: dict[str, set[TopicPartition]] = {}
        # changes, consumed by the shell
        self.isr_candidates: set[TopicPartition] = set()  # led partitions whose ISR may change now
        self.fetch_dirty: dict[int, set[TopicPartition]] = {}  # leader -> followed partitions changed
        self.sessions: dict[int, LeaderSession] = {}  # as leader: follower id -> its fetch session
        # full LeaderAndIsr sets: the one being received, the key of the latest one started or
        # completed, and counters for the report
        self.pending_full: PendingFull | None = None
        self._latest_full: tuple[int, int, int] | None = None
        self._completed_full: tuple[int, int, int] | None = None
        self.full_requests_completed = 0
        self.stray_replicas_deleted = 0

    @property
    def replicas(self) -> Mapping[TopicPartition, Replica]:
        """Every hosted replica (read-only: change them with :meth:`put` and :meth:`remove`)."""
        return self._replicas

    # --- the replica store and its indices -----------------------------------------------------

    def _follows(self, r: Replica) -> int | None:
        """The broker ``r`` fetches from, if it is a follower with a remote leader."""
        if r.role is ReplicaRole.FOLLOWER and r.leader >= 0 and r.leader != self.broker_id:
            return r.leader
        return None

    def put(self, r: Replica) -> None:
        tp = r.tp
        old = self._replicas.get(tp)
        self._replicas[tp] = r
        if (
            old is not None
            and old.role is r.role
            and old.leader_epoch == r.leader_epoch
            and old.leader == r.leader
            and old.isr == r.isr
            and old.replicas == r.replicas
        ):
            return  # progress only: no index changes
        self._reindex(tp, old, r)

    def remove(self, tp: TopicPartition) -> None:
        old = self._replicas.pop(tp, None)
        if old is not None:
            self._reindex(tp, old, None)
            self.dirs.forget(tp)
            self.inbound.forget(tp)  # its share of the bandwidth goes to the others at once
            for b in old.replicas:
                self.outbound.forget((tp, b))

    def _reindex(self, tp: TopicPartition, old: Replica | None, new: Replica | None) -> None:
        if old is None and new is not None:
            self._by_topic.setdefault(tp[0], set()).add(tp)
            self.dirs.placed(tp)
        elif new is None:
            topic = self._by_topic.get(tp[0])
            if topic is not None:
                topic.discard(tp)
                if not topic:
                    del self._by_topic[tp[0]]
        # as follower: which leader's fetch session carries it
        before = None if old is None else self._follows(old)
        after = None if new is None else self._follows(new)
        if before is not None and before != after:
            followed = self.followed.get(before)
            if followed is not None:
                followed.discard(tp)
                if not followed:
                    del self.followed[before]
        if after is not None:
            self.followed.setdefault(after, set()).add(tp)
        if before != after or (
            old is not None
            and new is not None
            and (old.leader_epoch != new.leader_epoch or old.log_end_offset != new.log_end_offset)
        ):
            for leader in (before, after):
                if leader is not None:
                    self.fetch_dirty.setdefault(leader, set()).add(tp)
        # as leader
        was_led = old is not None and old.role is ReplicaRole.LEADER
        is_led = new is not None and new.role is ReplicaRole.LEADER
        if is_led:
            self.led.add(tp)
            self.isr_candidates.add(tp)
            if self.topic_config(tp[0]).produce_bytes_per_s > 0:
                self.growing.add(tp)
        elif was_led:
            self.led.discard(tp)
            self.growing.discard(tp)
        if was_led or is_led:
            self._session_dirty(tp, old, new)

    def _session_dirty(self, tp: TopicPartition, old: Replica | None, new: Replica | None) -> None:
        """Followers in a fetch session with this led partition must hear of its change: all of
        them when the leadership changed, those that joined or left the ISR when only it did."""
        if (
            old is not None
            and new is not None
            and old.role is new.role
            and old.leader_epoch == new.leader_epoch
            and old.replicas == new.replicas
        ):
            told = set(old.isr).symmetric_difference(new.isr)
        else:
            told = {*(old.replicas if old is not None else ()), *(new.replicas if new is not None else ())}
        for b in told:
            s = self.sessions.get(b)
            if s is not None and tp in s.partitions:
                s.dirty.add(tp)

    def seen(self, r: Replica) -> dict[int, float]:
        """Followers of the led ``r`` (grown until now) whose fetch session had this partition at
        the leader's end at its latest fetch: each caught up as of that fetch (replica.credited)."""
        out: dict[int, float] = {}
        tp = r.tp
        for b in r.replicas:
            s = self.sessions.get(b)
            if s is None or b == self.broker_id or s.partitions.get(tp) != r.leader_epoch or tp in s.unserved:
                continue
            progress = r.followers.get(b)
            if progress is not None and progress.log_end_offset >= r.log_end_offset:
                out[b] = s.last_fetch_s
        return out

    def settle(self, r: Replica) -> Replica:
        """``r`` (led, grown) with its followers' implicit session fetches recorded (and stored),
        before a change that ends them."""
        seen = self.seen(r)
        if not seen:
            return r
        settled = rm.settled(r, seen)
        self.put(settled)
        return settled

    # --- configuration -------------------------------------------------------------------------

    def topic_config(self, topic: str) -> TopicSimConfig:
        cfg = self.topic_configs.get(topic)
        return cfg if cfg is not None else self._default_topic_config

    def set_topic_config(self, topic: str, config: TopicSimConfig, now: float) -> None:
        """New topic config; leaders settle growth at the old rate first (and the implicit session
        fetches of followers at their end, if the log starts growing)."""
        old = self.topic_config(topic)
        self.topic_configs[topic] = config
        if config.produce_bytes_per_s == old.produce_bytes_per_s:
            return
        growing = config.produce_bytes_per_s > 0
        for tp in self._by_topic.get(topic, ()):
            r = self._replicas[tp]
            if r.role is not ReplicaRole.LEADER:
                continue
            r = rm.grown(r, now, old.produce_bytes_per_s)
            if r.grown_at_s < now:  # (at rate 0 the growth is not settled as time passes)
                r = replace(r, grown_at_s=now)
            self.put(r)
            if growing:
                self.settle(r)
                self.growing.add(tp)
            else:
                self.growing.discard(tp)

    def set_broker_config(self, config: BrokerSimConfig, now: float) -> None:
        self.broker_config = config
        self.inbound.with_rates(config.replication_bytes_per_s, config.follower_throttled_rate, now)
        self.outbound.with_rates(config.replication_bytes_per_s, config.leader_throttled_rate, now)

    def hosted_topics(self) -> set[str]:
        return set(self._by_topic)

    def grown(self, r: Replica, now: float) -> Replica:
        """``r`` with its growth as leader settled until ``now`` (and stored)."""
        if r.role is not ReplicaRole.LEADER:
            return r
        g = rm.grown(r, now, self.topic_config(r.topic).produce_bytes_per_s)
        if g is not r:
            self.put(g)
        return g

    # --- control requests ----------------------------------------------------------------------

    def check_header(self, header: Header) -> int:
        """Kafka's order: broker epoch first, then controller epoch; the highest controller epoch
        is remembered once a request passes both."""
        if self.broker_epoch is None or header.broker_epoch != self.broker_epoch:
            return STALE_BROKER_EPOCH
        if header.controller_epoch < self.controller_epoch:
            return STALE_CONTROLLER_EPOCH
        self.controller_epoch = header.controller_epoch
        return NONE

    def learn_endpoints(self, brokers: Iterable[LiveBroker]) -> None:
        for b in brokers:
            url = control_url(b.endpoints)
            if url is not None:
                self.endpoints[b.broker_id] = url

    def leader_and_isr(self, request: LeaderAndIsrRequest, now: float) -> ControlResponse:
        error = self.check_header(request.header)
        if error:
            return _all_failed(error, ((p.topic, p.partition) for p in request.partition_states))
        self.learn_endpoints(request.live_leaders)
        errors = []
        for state in request.partition_states:
            tp = (state.topic, state.partition)
            known = self.replicas.get(tp)
            if known is not None and state.leader_epoch <= known.leader_epoch:
                code = STALE_CONTROLLER_EPOCH
            elif self.broker_id not in state.replicas:
                code = UNKNOWN_TOPIC_OR_PARTITION
            else:
                if known is not None and known.role is ReplicaRole.LEADER:
                    known = self.settle(self.grown(known, now))
                initial = self.topic_config(state.topic).initial_bytes
                self.put(rm.became(known, state, self.broker_id, initial, now))
                code = NONE
            errors.append(PartitionError(state.topic, state.partition, code))
        if request.full is None:
            if self.pending_full is not None:
                self.pending_full.touched.update((s.topic, s.partition) for s in request.partition_states)
            return ControlResponse(NONE, tuple(errors))
        complete, deleted = self._full_chunk(request)
        return ControlResponse(NONE, tuple(errors), complete, deleted)

    def _full_chunk(self, request: LeaderAndIsrRequest) -> tuple[bool, tuple[TopicPartition, ...]]:
        """Gather one chunk of a full set (its header already checked): whether the set is
        complete, and the strays its completion deleted."""
        full = request.full
        assert full is not None
        h = request.header
        key = (h.controller_epoch, h.broker_epoch, full.id)
        if key == self._completed_full:
            return True, ()  # a resent chunk of the set already completed: nothing more to do
        latest = self._latest_full
        if latest is not None and latest[:2] == key[:2] and key[2] < latest[2]:
            return False, ()  # a chunk of a set this controller has since replaced
        pending = self.pending_full
        if pending is None or pending.key != key:  # a new set: an incomplete older one is dropped
            pending = self.pending_full = PendingFull(key, full.total_partitions)
            self._latest_full = key
        pending.named.update((s.topic, s.partition) for s in request.partition_states)
        pending.named.update(request.partitions_without_state)
        pending.kept_topics.update(full.kept_topics)
        if len(pending.named) < pending.total_partitions:
            return False, ()
        self.pending_full = None
        if len(pending.named) > pending.total_partitions:
            return False, ()  # more names than the set announced: inconsistent, delete nothing
        self._completed_full = key
        strays = tuple(
            sorted(
                tp
                for tp in self._replicas
                if tp not in pending.named and tp not in pending.touched and tp[0] not in pending.kept_topics
            )
        )
        for tp in strays:
            self.remove(tp)
        self.full_requests_completed += 1
        self.stray_replicas_deleted += len(strays)
        return True, strays

    def stop_replica(self, request: StopReplicaRequest, now: float) -> ControlResponse:
        error = self.check_header(request.header)
        if error:
            return _all_failed(error, ((p.topic, p.partition) for p in request.partitions))
        errors = []
        for p in request.partitions:
            tp = (p.topic, p.partition)
            known = self.replicas.get(tp)
            code = NONE
            if known is None:
                pass  # nothing hosted: stopping and deleting are already done
            elif p.leader_epoch in (NO_EPOCH, EPOCH_DURING_DELETE) or p.leader_epoch >= known.leader_epoch:
                if p.delete_partition:
                    self.remove(tp)
                else:
                    self.put(rm.stopped(self.grown(known, now)))
            else:
                code = FENCED_LEADER_EPOCH
            errors.append(PartitionError(p.topic, p.partition, code))
        return ControlResponse(NONE, tuple(errors))

    def update_metadata(self, request: UpdateMetadataRequest, now: float) -> ControlResponse:
        error = self.check_header(request.header)
        if error:
            return ControlResponse(error)
        live = frozenset(b.broker_id for b in request.live_brokers)
        if live != self.live_brokers:
            self.isr_candidates.update(self.led)  # followers may have gone (or come back)
        self.live_brokers = live
        self.learn_endpoints(request.live_brokers)
        for state in request.partition_states:
            known = self.replicas.get((state.topic, state.partition))
            # a follower learns the ISR of its current epoch; the leader owns the ISR itself
            if (
                known is not None
                and known.role is ReplicaRole.FOLLOWER
                and state.leader_epoch == known.leader_epoch
                and state.partition_epoch >= known.partition_epoch
            ):
                in_isr = self.broker_id in state.isr
                if (state.partition_epoch, state.isr, in_isr) == (
                    known.partition_epoch,
                    known.isr,
                    known.in_isr,
                ):
                    continue  # nothing new (a resend, or the same state to every broker)
                self.put(replace(known, isr=state.isr, partition_epoch=state.partition_epoch, in_isr=in_isr))
        return ControlResponse(NONE)

    # --- moves between log dirs (KIP-113) ------------------------------------------------------

    def alter_log_dirs(self, request: AlterLogDirsRequest, now: float = 0.0) -> AlterLogDirsResponse:
        """Each move's code (and, refused for room, why): sizes as of ``now``."""

        def size(tp: TopicPartition) -> int:
            replica = self._replicas.get(tp)
            return 0 if replica is None else self.grown(replica, now).log_end_offset

        results = []
        for m in request.moves:
            code, reason = self.dirs.alter((m.topic, m.partition), m.log_dir, size)
            results.append(AgentLogDirMoveResult(m.topic, m.partition, code, reason))
        return AlterLogDirsResponse(tuple(results))

    def log_dir_move_bytes_per_s(self) -> float:
        """The intra-broker throttle, else the broker's replication rate (a simulated disk)."""
        throttle = self.broker_config.log_dir_move_throttled_rate
        return min(throttle, self.broker_config.replication_bytes_per_s)

    def advance_moves(self, now: float) -> list[TopicPartition]:
        """Copy the future replicas until ``now``; the replicas whose move completed."""
        return self.dirs.advance(
            lambda tp: self.grown(self._replicas[tp], now).log_end_offset,
            self.log_dir_move_bytes_per_s(),
            now,
        )

    # --- progress report -----------------------------------------------------------------------

    def report(self, now: float) -> ReplicasReport:
        infos = []
        sizes: dict[TopicPartition, int] = {}
        jbod = self.dirs.configured
        for tp in sorted(self._replicas):
            r = self.grown(self._replicas[tp], now)
            sizes[tp] = r.log_end_offset
            infos.append(
                ReplicaInfo(
                    topic=r.topic,
                    partition=r.partition,
                    leader=r.role is ReplicaRole.LEADER,
                    log_end_offset=r.log_end_offset,
                    lag_bytes=r.lag_bytes,
                    fetch_bytes_per_s=round(r.fetch_meter.rate(now), 1)
                    if r.role is ReplicaRole.FOLLOWER
                    else 0.0,
                    in_isr=(self.broker_id in r.isr) if r.role is ReplicaRole.LEADER else r.in_isr,
                    log_dir=self.dirs.dir_of.get(tp) if jbod else None,
                )
            )
        return ReplicasReport(
            self.broker_id,
            tuple(infos),
            self.full_requests_completed,
            self.stray_replicas_deleted,
            self.broker_config.replication_bytes_per_s,
            self.dirs.report(sizes) if jbod else None,
        )


def _all_failed(code: int, tps: Iterable[TopicPartition]) -> ControlResponse:
    return ControlResponse(code, tuple(PartitionError(t, p, code) for t, p in tps))
