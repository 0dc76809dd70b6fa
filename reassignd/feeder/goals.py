"""What a plan is for: goals and options, parsed from their command-line text. Pure.

``decommission:B,...``  every replica leaves these brokers;
``add:B,...``           the new brokers receive their fair share of bytes, taken from the others;
``rebalance:replicas|leaders|bytes``  even out replica counts, preferred leaders or bytes;
``rf:TOPIC=N``          give TOPIC's partitions N replicas;
``disk``                balance the log directories within each broker (usage of capacity),
                        after the goals that move replicas between brokers (:mod:`.disks`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Metric = Literal["replicas", "leaders", "bytes"]
METRICS: tuple[Metric, ...] = ("replicas", "leaders", "bytes")
GOAL_HELP = "decommission:B,...  add:B,...  rebalance:replicas|leaders|bytes  rf:TOPIC=N  disk"


class GoalError(ValueError):
    """A goal or option that cannot be used; ``str(error)`` is a one-line reason."""


@dataclass(frozen=True, slots=True)
class Decommission:
    brokers: frozenset[int]

    def __str__(self) -> str:
        return "decommission:" + ",".join(map(str, sorted(self.brokers)))


@dataclass(frozen=True, slots=True)
class AddBrokers:
    brokers: frozenset[int]

    def __str__(self) -> str:
        return "add:" + ",".join(map(str, sorted(self.brokers)))


@dataclass(frozen=True, slots=True)
class Rebalance:
    metric: Metric

    def __str__(self) -> str:
        return f"rebalance:{self.metric}"


@dataclass(frozen=True, slots=True)
class ReplicationFactor:
    topic: str
    replicas: int

    def __str__(self) -> str:
        return f"rf:{self.topic}={self.replicas}"


@dataclass(frozen=True, slots=True)
class DiskBalance:
    """Even out the usage of each broker's log directories (moves within brokers only)."""

    def __str__(self) -> str:
        return "disk"


Goal = Decommission | AddBrokers | Rebalance | ReplicationFactor | DiskBalance


@dataclass(frozen=True, slots=True)
class PlanOptions:
    topics: str | None = None  # a regex; only partitions of matching topics move (full match)
    exclude_brokers: frozenset[int] = frozenset()  # never receive a replica
    max_move_bytes: int | None = None  # the plan copies at most this many bytes
    seed: int = 0  # breaks ties between equally good brokers
    tolerance: float = 0.02  # rebalance:bytes aims at every broker within mean × (1 + tolerance)

    def selects(self, topic: str) -> bool:
        return self.topics is None or re.fullmatch(self.topics, topic) is not None


def parse_broker_ids(text: str, what: str) -> frozenset[int]:
    ids: set[int] = set()
    for raw in text.split(","):
        part = raw.strip()
        if not part.isdigit():
            raise GoalError(f"{what}: expected broker ids like 1,2,3, got {text!r}")
        ids.add(int(part))
    return frozenset(ids)


def parse_goal(text: str) -> Goal:
    kind, sep, arg = text.strip().partition(":")
    if kind == "disk" and not arg:
        return DiskBalance()
    if not sep or not arg:
        raise GoalError(f"goal {text!r}: expected {GOAL_HELP}")
    match kind:
        case "decommission":
            return Decommission(parse_broker_ids(arg, f"goal {text!r}"))
        case "add":
            return AddBrokers(parse_broker_ids(arg, f"goal {text!r}"))
        case "rebalance":
            if arg not in METRICS:
                raise GoalError(
                    f"goal {text!r}: expected rebalance:replicas, rebalance:leaders or rebalance:bytes"
                )
            return Rebalance(arg)
        case "rf":
            topic, eq, n = arg.rpartition("=")
            if not eq or not topic or not n.isdigit() or int(n) < 1:
                raise GoalError(f"goal {text!r}: expected rf:TOPIC=N with N >= 1")
            return ReplicationFactor(topic, int(n))
    raise GoalError(f"goal {text!r}: unknown goal {kind!r}; expected {GOAL_HELP}")


def check_topics_regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as e:
        raise GoalError(f"--topics {text!r}: invalid regular expression: {e}") from None
    return text
