"""The controller's Prometheus metrics, one registry per controller instance.

Names follow Kafka's controller metrics where Kafka has them (EventQueueSize, EventQueueTimeMs,
<State>RateAndTimeMs, ActiveControllerCount, OfflinePartitionsCount, UncleanLeaderElectionsPerSec),
in Prometheus spelling.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

_MS_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)


class ControllerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.event_queue_size = Gauge(
            "reassignd_controller_event_queue_size",
            "Events waiting in the controller queue (EventQueueSize)",
            registry=r,
        )
        self.event_queue_time_ms = Histogram(
            "reassignd_controller_event_queue_time_ms",
            "Time events spent queued, in ms (EventQueueTimeMs)",
            buckets=_MS_BUCKETS,
            registry=r,
        )
        self.event_time_ms = Histogram(
            "reassignd_controller_event_time_ms",
            "Processing time per event type, in ms (<State>RateAndTimeMs); _count gives the rate",
            ["event"],
            buckets=_MS_BUCKETS,
            registry=r,
        )
        self.loop_stall_ms = Histogram(
            "reassignd_controller_loop_stall_ms",
            "Times the process's event loop was held (no task could run), in ms: an event or an "
            "answer that ran too long without yielding",
            buckets=_MS_BUCKETS,
            registry=r,
        )
        self.loop_stall_worst_ms = Gauge(
            "reassignd_controller_loop_stall_worst_ms",
            "The longest the process's event loop was held since it started, in ms, by the event "
            "in hand (none: between events, an answer or I/O)",
            ["during"],
            registry=r,
        )
        self.active = Gauge(
            "reassignd_controller_active",
            "1 while this instance is the active controller (ActiveControllerCount)",
            registry=r,
        )
        self.controller_epoch = Gauge(
            "reassignd_controller_epoch", "The controller epoch this instance knows", registry=r
        )
        self.offline_partitions = Gauge(
            "reassignd_controller_offline_partitions",
            "Partitions without a live leader (OfflinePartitionsCount)",
            registry=r,
        )
        self.partitions = Gauge(
            "reassignd_controller_partitions", "Partitions known to the active controller", registry=r
        )
        self.reassigning_partitions = Gauge(
            "reassignd_controller_reassigning_partitions", "Partitions being reassigned", registry=r
        )
        self.unclean_leader_elections = Counter(
            "reassignd_unclean_leader_elections",
            "Leaders elected from outside the ISR because no in-sync replica was alive and the topic "
            "(or the broker default) allows it (UncleanLeaderElectionsPerSec)",
            registry=r,
        )
        self.preferred_leader_elections = Counter(
            "reassignd_preferred_leader_elections",
            "Partitions whose leadership went back to their preferred replica, by trigger: an "
            "ElectLeaders request (HTTP or Kafka listener), Kafka's /admin/preferred_replica_election "
            "znode, or the auto leader rebalance",
            ["trigger"],
            registry=r,
        )
        self.leader_imbalanced_brokers = Gauge(
            "reassignd_controller_leader_imbalanced_brokers",
            "Brokers whose leader imbalance ratio was above leader.imbalance.per.broker.percentage "
            "at the last auto leader rebalance check",
            registry=r,
        )
        self.live_brokers = Gauge("reassignd_controller_live_brokers", "Registered broker agents", registry=r)
        self.batches = Gauge(
            "reassignd_batches", "Batches the active controller knows, by state", ["state"], registry=r
        )
        self.batch_moves = Gauge(
            "reassignd_batch_moves", "Moves of every batch, by state", ["state"], registry=r
        )
        self.batch_throttles = Gauge(
            "reassignd_batch_throttles",
            "Throttles batches have set and not yet restored, by kind (broker, topic)",
            ["kind"],
            registry=r,
        )
        self.batch_cap_changes = Counter(
            "reassignd_batch_cap_changes",
            "Adaptive concurrency's changes of a broker's cap of a batch's moves, by direction (up: "
            "raised while the cluster was healthy, down: halved)",
            ["direction"],
            registry=r,
        )
        self.self_healing = Counter(
            "reassignd_self_healing_decisions",
            "Self-healing's decisions, by kind: lost (a broker's loss recorded), planned (a batch "
            "submitted), and the outcomes completed, returned, incomplete, failed",
            ["decision"],
            registry=r,
        )
        self.self_healing_moves = Counter(
            "reassignd_self_healing_moves",
            "Partitions self-healing's batches were submitted to move",
            registry=r,
        )
        self.self_healing_lost_brokers = Gauge(
            "reassignd_self_healing_lost_brokers",
            "Lost brokers self-healing follows (its grace running, or its replicas moving)",
            registry=r,
        )
        self.decode_errors = Counter(
            "reassignd_controller_znode_decode_errors",
            "Znodes that could not be decoded, by kind",
            ["kind"],
            registry=r,
        )
        self.elections = Counter(
            "reassignd_controller_elections_won",
            "Times this instance became the active controller",
            registry=r,
        )
        self.refused_inputs = Counter(
            "reassignd_controller_refused_inputs",
            "Inputs refused because they fail the same way every time (a deterministic failure: "
            "an oversized znode, a missing node, an undecodable value...), by kind",
            ["kind"],
            registry=r,
        )
        self.reloads = Counter(
            "reassignd_controller_reloads",
            "Times the active controller reloaded the cluster from ZooKeeper after a refused event, "
            "staying active under the same epoch",
            registry=r,
        )
        self.resignations = Counter(
            "reassignd_controller_resignations",
            "Times this instance stopped being the active controller",
            ["reason"],
            registry=r,
        )
        self.control_requests = Counter(
            "reassignd_control_requests",
            "Control requests sent to broker agents",
            ["request", "outcome"],
            registry=r,
        )
