"""The JSON shapes of the API's read endpoints, built from a :class:`ClusterSnapshot`.

Pure: values in, JSON-ready dicts out; no aiohttp, no clock (``now_s`` is passed in).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reassignd.controller.model.snapshot import (
    ActiveController,
    BrokerView,
    ClusterSnapshot,
    Problem,
    SelfHealingView,
    TopicView,
)

Json = dict[str, Any]


def session_id_hex(session_id: int | None) -> str | None:
    """ZooKeeper's own spelling of a session id: ``0x100000a962b0000``."""
    return None if session_id is None else f"0x{session_id:x}"


def active_controller_json(active: ActiveController | None) -> Json | None:
    return None if active is None else {"id": active.controller_id, "http": active.http}


def problem_json(problem: Problem) -> Json:
    return {"path": problem.path, "reason": problem.reason}


def zookeeper_json(connected: bool, session_id: int | None) -> Json:
    return {"connected": connected, "session_id": session_id_hex(session_id)}


def status_json(
    snapshot: ClusterSnapshot,
    *,
    zk_connected: bool,
    zk_session_id: int | None,
    queue_size: int,
    queue_time_ms: Mapping[str, float],
    uptime_s: float,
) -> Json:
    return {
        "controller_id": snapshot.controller_id,
        "active": snapshot.active,
        "controller_epoch": snapshot.controller_epoch,
        "active_controller": active_controller_json(snapshot.active_controller),
        "zookeeper": zookeeper_json(zk_connected, zk_session_id),
        "brokers": {"live": sorted(snapshot.brokers)},
        "topics": len(snapshot.topics),
        "partitions": snapshot.partition_count,
        "reassigning_partitions": snapshot.reassigning_count,
        "event_queue": {"size": queue_size, "queue_time_ms": dict(queue_time_ms)},
        "uptime_s": max(0, int(uptime_s)),
        "problems": [problem_json(p) for p in snapshot.problems],
    } | ({} if snapshot.self_healing is None else {"self_healing": self_healing_json(snapshot.self_healing)})


def self_healing_json(view: SelfHealingView) -> Json:
    """The active controller's self-healing: the lost brokers it follows and the last outcomes."""
    return {
        "enabled": view.enabled,
        "broker_grace_s": view.broker_grace_s,
        "brokers": [
            {
                "broker_id": b.broker_id,
                "lost_at_ms": b.lost_at_ms,
                "heal_at_ms": b.heal_at_ms,
                "state": b.state,
                "batch_ids": list(b.batch_ids),
                "replicas": b.replicas,
            }
            for b in view.brokers
        ],
        "recent": [
            {
                "broker_id": o.broker_id,
                "batch_id": o.batch_id,
                "outcome": o.outcome,
                "reason": o.reason,
                "at_ms": o.at_ms,
            }
            for o in view.recent
        ],
    }


def broker_json(broker: BrokerView) -> Json:
    return {
        "id": broker.broker_id,
        "rack": broker.rack,
        "endpoints": list(broker.endpoints),
        "broker_epoch": broker.broker_epoch,
    }


def brokers_json(snapshot: ClusterSnapshot) -> Json:
    """The registered brokers, and the demoted ones (registered or not) with the partitions whose
    orders their demotion recorded (what ``promote`` restores)."""
    return {
        "brokers": [broker_json(snapshot.brokers[b]) for b in sorted(snapshot.brokers)],
        "demoted": {str(b): n for b, n in sorted(snapshot.demoted.items())},
    }


def topic_summary_json(topic: TopicView) -> Json:
    return {
        "name": topic.name,
        "partitions": len(topic.partitions),
        "replication_factor": topic.replication_factor,
        "reassigning_partitions": topic.reassigning_partitions,
    }


def topics_json(snapshot: ClusterSnapshot) -> Json:
    return {"topics": [topic_summary_json(snapshot.topics[t]) for t in sorted(snapshot.topics)]}


def topic_json(topic: TopicView) -> Json:
    """The partitions are msgspec structs whose fields are the JSON members, in their order: the
    response encoder writes them in C (a 100-partition topic: 20 µs, where building a dict per
    partition first took 120 µs)."""
    return {"name": topic.name, "topic_id": topic.topic_id, "partitions": topic.partitions}


def readiness(snapshot: ClusterSnapshot, *, zk_connected: bool) -> str | None:
    """Why this instance is not ready (one line), or None when it is: connected to ZooKeeper and
    either the active controller or following a known active controller."""
    if not zk_connected:
        return "not connected to ZooKeeper"
    if not snapshot.active and snapshot.active_controller is None:
        return "no active controller known"
    return None
