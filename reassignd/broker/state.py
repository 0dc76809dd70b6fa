"""The agent's replica manager: the replicas it hosts and what control requests do to them.

No I/O and no clock: the shell (control.py, fetcher.py, isr.py, agent.py) passes ``now`` and does
every await itself. No method awaits, so each one runs atomically on the event loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from reassignd.broker import replica as rm
from reassignd.broker.protocol import (
    FENCED_LEADER_EPOCH,
    NONE,
    STALE_BROKER_EPOCH,
    STALE_CONTROLLER_EPOCH,
    UNKNOWN_TOPIC_OR_PARTITION,
    ControlResponse,
    Header,
    LeaderAndIsrRequest,
    LiveBroker,
    PartitionError,
    ReplicaInfo,
    ReplicasReport,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from reassignd.broker.replica import Replica, Role, TopicPartition
from reassignd.broker.sim_config import BrokerSimConfig, TopicSimConfig, topic_sim_config
from reassignd.broker.throttle import TokenBucket

NO_EPOCH = -1  # StopReplica sentinels that bypass the leader-epoch check (Kafka's NoEpoch,
EPOCH_DURING_DELETE = -2  # EpochDuringDelete)


@dataclass(frozen=True, slots=True)
class Bandwidth:
    """The broker's replication buckets: its bandwidth each way and the KIP-73 throttles."""

    inbound: TokenBucket
    outbound: TokenBucket
    leader_throttle: TokenBucket
    follower_throttle: TokenBucket

    @staticmethod
    def of(config: BrokerSimConfig, now: float) -> Bandwidth:
        return Bandwidth(
            TokenBucket.full(config.replication_bytes_per_s, now),
            TokenBucket.full(config.replication_bytes_per_s, now),
            TokenBucket.full(config.leader_throttled_rate, now),
            TokenBucket.full(config.follower_throttled_rate, now),
        )

    def with_config(self, config: BrokerSimConfig, now: float) -> Bandwidth:
        return Bandwidth(
            self.inbound.with_rate(config.replication_bytes_per_s, now),
            self.outbound.with_rate(config.replication_bytes_per_s, now),
            self.leader_throttle.with_rate(config.leader_throttled_rate, now),
            self.follower_throttle.with_rate(config.follower_throttled_rate, now),
        )


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
        now: float,
    ) -> None:
        self.broker_id = broker_id
        self.replicas: dict[TopicPartition, Replica] = {}
        self.controller_epoch = -1  # the highest seen
        self.broker_epoch: int | None = None  # the registration's czxid, once registered
        self.live_brokers: frozenset[int] | None = None  # None until an UpdateMetadata
        self.endpoints: dict[int, str] = {}  # broker id -> control URL
        self.default_produce_bytes_per_s = default_produce_bytes_per_s
        self.flag_replication_bytes_per_s = replication_bytes_per_s
        self.topic_configs: dict[str, TopicSimConfig] = {}
        self.broker_config = BrokerSimConfig(replication_bytes_per_s)
        self.bandwidth = Bandwidth.of(self.broker_config, now)
        self.isr_candidates: set[TopicPartition] = set()  # led partitions whose ISR may grow now

    # --- configuration -------------------------------------------------------------------------

    def topic_config(self, topic: str) -> TopicSimConfig:
        cfg = self.topic_configs.get(topic)
        return cfg if cfg is not None else topic_sim_config(None, self.default_produce_bytes_per_s)

    def set_topic_config(self, topic: str, config: TopicSimConfig, now: float) -> None:
        """New topic config; leaders settle growth at the old rate first."""
        old = self.topic_config(topic)
        for tp, r in self.replicas.items():
            if tp[0] == topic and r.role is Role.LEADER:
                self.replicas[tp] = rm.grown(r, now, old.produce_bytes_per_s)
        self.topic_configs[topic] = config

    def set_broker_config(self, config: BrokerSimConfig, now: float) -> None:
        self.broker_config = config
        self.bandwidth = self.bandwidth.with_config(config, now)

    def hosted_topics(self) -> set[str]:
        return {topic for topic, _ in self.replicas}

    def grown(self, r: Replica, now: float) -> Replica:
        """``r`` with its growth as leader settled until ``now`` (and stored)."""
        if r.role is not Role.LEADER:
            return r
        g = rm.grown(r, now, self.topic_config(r.topic).produce_bytes_per_s)
        self.replicas[r.tp] = g
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
                if known is not None:
                    known = self.grown(known, now)
                initial = self.topic_config(state.topic).initial_bytes
                self.replicas[tp] = rm.became(known, state, self.broker_id, initial, now)
                code = NONE
            errors.append(PartitionError(state.topic, state.partition, code))
        return ControlResponse(NONE, tuple(errors))

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
                    del self.replicas[tp]
                else:
                    self.replicas[tp] = rm.stopped(self.grown(known, now))
            else:
                code = FENCED_LEADER_EPOCH
            errors.append(PartitionError(p.topic, p.partition, code))
        return ControlResponse(NONE, tuple(errors))

    def update_metadata(self, request: UpdateMetadataRequest, now: float) -> ControlResponse:
        error = self.check_header(request.header)
        if error:
            return ControlResponse(error)
        self.live_brokers = frozenset(b.broker_id for b in request.live_brokers)
        self.learn_endpoints(request.live_brokers)
        for state in request.partition_states:
            known = self.replicas.get((state.topic, state.partition))
            # a follower learns the ISR of its current epoch; the leader owns the ISR itself
            if (
                known is not None
                and known.role is Role.FOLLOWER
                and state.leader_epoch == known.leader_epoch
                and state.partition_epoch >= known.partition_epoch
            ):
                in_isr = self.broker_id in state.isr
                self.replicas[known.tp] = replace(
                    known, isr=state.isr, partition_epoch=state.partition_epoch, in_isr=in_isr
                )
        return ControlResponse(NONE)

    # --- progress report -----------------------------------------------------------------------

    def report(self, now: float) -> ReplicasReport:
        infos = []
        for tp in sorted(self.replicas):
            r = self.grown(self.replicas[tp], now)
            infos.append(
                ReplicaInfo(
                    topic=r.topic,
                    partition=r.partition,
                    leader=r.role is Role.LEADER,
                    log_end_offset=r.log_end_offset,
                    lag_bytes=r.lag_bytes,
                    fetch_bytes_per_s=round(r.fetch_meter.rate(now), 1) if r.role is Role.FOLLOWER else 0.0,
                    in_isr=(self.broker_id in r.isr) if r.role is Role.LEADER else r.in_isr,
                )
            )
        return ReplicasReport(self.broker_id, tuple(infos))


def _all_failed(code: int, tps: Iterable[TopicPartition]) -> ControlResponse:
    return ControlResponse(code, tuple(PartitionError(t, p, code) for t, p in tps))
