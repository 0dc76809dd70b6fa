"""One sample of the broker agents' reports, handed to the active controller by the sampler
(``reassignd.agent_reports.sampler``): what adaptive concurrency and self-healing act on, since
the controller itself never asks the agents anything. Pure values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from reassignd.executor.adaptive import BrokerRate
from reassignd.executor.model import LogDirs
from reassignd.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class AgentSample:
    epoch: int  # the controller epoch of the snapshot it was taken against (another: dropped)
    rates: Mapping[int, BrokerRate] = field(default_factory=dict)  # per broker that answered
    stuck: Mapping[str, int] = field(default_factory=dict)  # batch id -> its stuck moves now
    sizes: Mapping[TopicPartition, int] = field(default_factory=dict)  # leaders' log sizes, bytes


@dataclass(frozen=True, slots=True)
class DirMovesSeen:
    """A round of the batches' moves between log dirs (``agent_reports.dir_mover``): moves about
    to be asked (journal them first, with the dirs their replicas are in), moves whose replicas
    all arrived, moves an agent refused (each with why)."""

    epoch: int
    asking: Mapping[str, Mapping[TopicPartition, LogDirs]] = field(default_factory=dict)
    done: Mapping[str, frozenset[TopicPartition]] = field(default_factory=dict)
    failed: Mapping[str, Mapping[TopicPartition, str]] = field(default_factory=dict)
