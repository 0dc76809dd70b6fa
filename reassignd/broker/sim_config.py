"""Simulation parameters and KIP-73 throttles read from ZooKeeper config znodes. Pure.

Topic keys (``/config/topics/<t>``): ``reassignd.sim.initial.bytes``,
``reassignd.sim.produce.bytes.per.s`` and Kafka's ``leader/follower.replication.throttled.replicas``.
Broker keys (``/config/brokers/<id>``, then ``<default>`` for the sim key):
``reassignd.sim.replication.bytes.per.s`` and Kafka's ``leader/follower.replication.throttled.rate``;
Kafka's intra-broker throttle ``replica.alter.log.dirs.io.max.bytes.per.second`` (own, then default).
A malformed value is reported (``problems``) and its default used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from reassignd.broker.throttle import ThrottledReplicas

INITIAL_BYTES = "reassignd.sim.initial.bytes"
PRODUCE_BYTES_PER_S = "reassignd.sim.produce.bytes.per.s"
REPLICATION_BYTES_PER_S = "reassignd.sim.replication.bytes.per.s"
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"
LOG_DIR_MOVE_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"


@dataclass(frozen=True, slots=True)
class TopicSimConfig:
    initial_bytes: int = 0
    produce_bytes_per_s: float = 0.0
    leader_throttled: ThrottledReplicas = field(default_factory=ThrottledReplicas)
    follower_throttled: ThrottledReplicas = field(default_factory=ThrottledReplicas)
    problems: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class BrokerSimConfig:
    replication_bytes_per_s: float
    leader_throttled_rate: float = math.inf  # Kafka's default: Long.MaxValue, i.e. unthrottled
    follower_throttled_rate: float = math.inf
    # moves between the broker's own log dirs (unthrottled: they copy at the replication rate)
    log_dir_move_throttled_rate: float = math.inf
    problems: tuple[str, ...] = field(default=(), compare=False)


def _number(config: Mapping[str, str], key: str, default: float, problems: list[str]) -> float:
    raw = config.get(key)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        problems.append(f"{key}={raw!r} is not a number")
        return default
    if not value >= 0:  # also rejects NaN
        problems.append(f"{key}={raw!r} must be >= 0")
        return default
    return value


def _throttled(config: Mapping[str, str], key: str, problems: list[str]) -> ThrottledReplicas:
    raw = config.get(key)
    if raw is None:
        return ThrottledReplicas()
    try:
        return ThrottledReplicas.parse(raw)
    except ValueError as e:
        problems.append(f"{key}: {e}")
        return ThrottledReplicas()


def topic_sim_config(
    config: Mapping[str, str] | None, default_produce_bytes_per_s: float = 0.0
) -> TopicSimConfig:
    """From a topic's config map (``None`` when ``/config/topics/<t>`` does not exist)."""
    config = config or {}
    problems: list[str] = []
    initial = _number(config, INITIAL_BYTES, 0, problems)
    produce = _number(config, PRODUCE_BYTES_PER_S, default_produce_bytes_per_s, problems)
    return TopicSimConfig(
        initial_bytes=int(initial) if math.isfinite(initial) else 0,
        produce_bytes_per_s=produce,
        leader_throttled=_throttled(config, LEADER_THROTTLED_REPLICAS, problems),
        follower_throttled=_throttled(config, FOLLOWER_THROTTLED_REPLICAS, problems),
        problems=tuple(problems),
    )


def broker_sim_config(
    own: Mapping[str, str] | None, default: Mapping[str, str] | None, flag_replication_bytes_per_s: float
) -> BrokerSimConfig:
    """From ``/config/brokers/<id>`` and ``/config/brokers/<default>`` (``None`` when missing).

    The replication bandwidth comes from the broker's own config, then the default entity, then
    the command-line flag; the KIP-73 rates only from the broker's own config (as in Kafka); the
    intra-broker throttle from the broker's own config, then the default entity.
    """
    own = own or {}
    default = default or {}
    problems: list[str] = []
    fallback = _number(default, REPLICATION_BYTES_PER_S, flag_replication_bytes_per_s, problems)
    return BrokerSimConfig(
        replication_bytes_per_s=_number(own, REPLICATION_BYTES_PER_S, fallback, problems),
        leader_throttled_rate=_number(own, LEADER_THROTTLED_RATE, math.inf, problems),
        follower_throttled_rate=_number(own, FOLLOWER_THROTTLED_RATE, math.inf, problems),
        log_dir_move_throttled_rate=_number(
            own, LOG_DIR_MOVE_RATE, _number(default, LOG_DIR_MOVE_RATE, math.inf, problems), problems
        ),
        problems=tuple(problems),
    )
