"""A lost broker's replicas re-placed, in process: the planner's ``decommission:<id>`` goal over
the cluster as the controller holds it, with the lost broker offline (it receives nothing, every
replica on it moves). Self-healing calls this (``reassignd.controller.model.placement``); the
composition root hands it to the controller. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reassignd.feeder.goals import Decommission, PlanOptions
from reassignd.feeder.model import CURRENT, PARTITION, TOPIC, build_cluster, make_row
from reassignd.feeder.planner import plan_locally
from reassignd.topic_partition import Replicas, TopicPartition


def evacuate(
    racks: Mapping[int, str | None],
    partitions: Sequence[tuple[str, int, int, Replicas]],
    lost: frozenset[int],
) -> dict[TopicPartition, Replicas]:
    """The new replicas of each partition that has one on a broker of ``lost`` (see
    ``PlaceLostReplicas``): rack-aware, minimal movement, the receiving brokers' bytes evened out
    (``feed plan --goal decommission:<lost>``, seed 0). A partition some replica of which found
    no place is left out."""
    if not racks:
        return {}
    rows = [make_row(t, p, replicas, size) for t, p, size, replicas in partitions]
    cluster = build_cluster(racks, rows, allow_offline=True)
    leaving = frozenset(b for b in lost if b in cluster.racks and b not in racks)
    if not leaving:  # they host nothing
        return {}
    result = plan_locally(cluster, [Decommission(leaving)], PlanOptions())
    return {(r[TOPIC], r[PARTITION]): r[CURRENT] for r in result.moves if not leaving & set(r[CURRENT])}
