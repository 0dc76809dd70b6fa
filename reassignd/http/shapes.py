"""The read endpoints' answers, built from a :class:`ClusterSnapshot` as the contract's structs
(:mod:`reassignd.contracts.cluster`), which the routes encode.

Pure: values in, structs out; no aiohttp, no clock (``now_s`` is passed in).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from reassignd.contracts import cluster as c
from reassignd.contracts.errors import ActiveController as ActiveControllerJson
from reassignd.controller.model.snapshot import (
    ActiveControllerAddress,
    BrokerView,
    ClusterSnapshot,
    Problem,
    SelfHealingView,
    TopicView,
)
from reassignd.zk.values import ZkAccess


def session_id_hex(session_id: int | None) -> str | None:
    """ZooKeeper's own spelling of a session id: ``0x100000a962b0000``."""
    return None if session_id is None else f"0x{session_id:x}"


def active_controller_json(active: ActiveControllerAddress | None) -> ActiveControllerJson | None:
    return None if active is None else ActiveControllerJson(active.controller_id, active.http)


def problem_json(problem: Problem) -> c.StatusProblem:
    return c.StatusProblem(problem.path, problem.reason)


def zookeeper_json(connected: bool, session_id: int | None, access: ZkAccess | None = None) -> c.ZooKeeper:
    if access is None:
        return c.ZooKeeper(connected, session_id_hex(session_id))
    acls: Literal["open", "kafka"] = "kafka" if access.set_acl else "open"
    return c.ZooKeeper(connected, session_id_hex(session_id), access.principal, access.tls, acls)


def status_json(
    snapshot: ClusterSnapshot,
    *,
    zk_connected: bool,
    zk_session_id: int | None,
    queue_size: int,
    queue_time_ms: Mapping[str, float],
    uptime_s: float,
    events: c.EventsStatus | None = None,
) -> c.Status:
    return c.Status(
        controller_id=snapshot.controller_id,
        active=snapshot.active,
        controller_epoch=snapshot.controller_epoch,
        active_controller=active_controller_json(snapshot.active_controller),
        zookeeper=zookeeper_json(zk_connected, zk_session_id),
        brokers=c.LiveBrokers(tuple(sorted(snapshot.brokers))),
        topics=len(snapshot.topics),
        partitions=snapshot.partition_count,
        reassigning_partitions=snapshot.reassigning_count,
        event_queue=c.EventQueue(queue_size, dict(queue_time_ms)),
        uptime_s=max(0, int(uptime_s)),
        problems=tuple(problem_json(p) for p in snapshot.problems),
        self_healing=None if snapshot.self_healing is None else self_healing_json(snapshot.self_healing),
        events=events,
    )


def self_healing_json(view: SelfHealingView) -> c.SelfHealing:
    """The active controller's self-healing: the lost brokers it follows and the last outcomes."""
    return c.SelfHealing(
        enabled=view.enabled,
        broker_grace_s=view.broker_grace_s,
        brokers=tuple(
            c.LostBrokerStatus(
                b.broker_id, b.lost_at_ms, b.heal_at_ms, b.state, tuple(b.batch_ids), b.replicas
            )
            for b in view.brokers
        ),
        recent=tuple(
            c.HealOutcome(o.broker_id, o.batch_id, o.outcome, o.reason, o.at_ms) for o in view.recent
        ),
    )


def broker_json(broker: BrokerView) -> c.Broker:
    return c.Broker(broker.broker_id, broker.rack, tuple(broker.endpoints), broker.broker_epoch)


def brokers_json(snapshot: ClusterSnapshot) -> c.Brokers:
    """The registered brokers, and the demoted ones (registered or not) with the partitions whose
    orders their demotion recorded (what ``promote`` restores)."""
    return c.Brokers(
        brokers=tuple(broker_json(snapshot.brokers[b]) for b in sorted(snapshot.brokers)),
        demoted={str(b): n for b, n in sorted(snapshot.demoted.items())},
    )


def topic_summary_json(topic: TopicView) -> c.TopicSummary:
    return c.TopicSummary(
        topic.name, len(topic.partitions), topic.replication_factor, topic.reassigning_partitions
    )


def topics_json(snapshot: ClusterSnapshot) -> c.Topics:
    return c.Topics(tuple(topic_summary_json(snapshot.topics[t]) for t in sorted(snapshot.topics)))


def topic_json(topic: TopicView) -> c.Topic:
    """The partitions are the published views themselves (the contract's struct): the response
    encoder writes them in C (a 100-partition topic: 20 µs, where building a dict per partition
    first took 120 µs)."""
    return c.Topic(topic.name, topic.topic_id, topic.partitions)


def readiness(snapshot: ClusterSnapshot, *, zk_connected: bool) -> str | None:
    """Why this instance is not ready (one line), or None when it is: connected to ZooKeeper and
    either the active controller or following a known active controller."""
    if not zk_connected:
        return "not connected to ZooKeeper"
    if not snapshot.active and snapshot.active_controller is None:
        return "no active controller known"
    return None
