"""Replica placement for new topics and partitions: Kafka's ``AdminUtils.assignReplicasToBrokers``. Pure.

A faithful port of Kafka 3.3 (``core/src/main/scala/kafka/admin/AdminUtils.scala``), so a topic
created through reassignd lands where ``kafka-topics --create`` would have put it:

* **Rack-unaware** (no broker has a rack): the first replica of each partition goes round-robin
  over the broker list from a start index; the others follow at an increasing shift, which grows
  by one each time the partition id wraps around the broker count, so the followers of a broker's
  partitions spread over the other brokers.
* **Rack-aware** (every broker has a rack): the same round-robin over a rack-alternated broker
  list (``getRackAlternatedBrokerList``); a follower skips a broker whose rack already holds a
  replica while some rack holds none, and a broker that already holds one while some broker holds
  none.

The start index and the initial shift are two independent draws from ``rng`` (Kafka's
``rand.nextInt(brokers)`` twice) unless ``fixed_start_index`` pins both. The broker order is the
caller's, as in Kafka (which passes brokers sorted by id); only the rack-aware list re-sorts.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reassignd.errors import InvalidPartitions, InvalidReplicationFactor

MIXED_RACKS_MESSAGE = "Not all brokers have rack information for replica rack aware assignment."


@dataclass(frozen=True, slots=True)
class BrokerMeta:
    """Kafka's ``BrokerMetadata``: a live broker's id and its ``broker.rack`` (None when unset)."""

    id: int
    rack: str | None = None


def assign_replicas(
    brokers: Sequence[BrokerMeta],
    n_partitions: int,
    replication_factor: int,
    *,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: random.Random,
) -> dict[int, tuple[int, ...]]:
    """Partition id → replicas (preferred leader first) for ``n_partitions`` partitions numbered
    from ``max(0, start_partition_id)``.

    Raises InvalidPartitions (37) or InvalidReplicationFactor (38) with Kafka's messages. Brokers
    with and without racks mixed also raise InvalidReplicationFactor: Kafka throws an
    ``AdminOperationException``, which its ZkAdminManager answers as -1 UNKNOWN_SERVER_ERROR with
    the message hidden; 38 tells the client what is wrong with the request instead.
    """
    if len({b.id for b in brokers}) != len(brokers):
        raise ValueError(f"duplicate broker ids in {[b.id for b in brokers]}")
    if n_partitions <= 0:
        raise InvalidPartitions("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactor("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactor(
            f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}."
        )
    if all(b.rack is None for b in brokers):
        return _assign_rack_unaware(
            n_partitions,
            replication_factor,
            [b.id for b in brokers],
            fixed_start_index,
            start_partition_id,
            rng,
        )
    racks: dict[int, str] = {}
    for b in brokers:
        if b.rack is None:
            raise InvalidReplicationFactor(MIXED_RACKS_MESSAGE)
        racks[b.id] = b.rack
    return _assign_rack_aware(
        n_partitions, replication_factor, racks, fixed_start_index, start_partition_id, rng
    )


def assign_new_partitions(
    existing: Mapping[int, Sequence[int]],
    brokers: Sequence[BrokerMeta],
    new_count: int,
    rng: random.Random,
) -> dict[int, tuple[int, ...]]:
    """Replicas for partitions ``len(existing) .. new_count - 1`` of a topic being expanded, as
    Kafka's ``AdminZkClient.createNewPartitionsAssignment`` places them: the replication factor
    of partition 0, a start index at the first broker (in ``brokers`` order) whose id is ≥
    partition 0's first replica, and partition ids continuing from the existing count.

    The start index is always fixed, so ``rng`` is never drawn from; it is taken so every
    placement call looks alike. Raises ValueError when partition 0 is missing or empty (a corrupt
    topic), InvalidPartitions when ``new_count`` is not an increase, and what ``assign_replicas``
    raises (38 when fewer brokers are live than partition 0 has replicas).
    """
    if 0 not in existing:
        raise ValueError(
            f"Unexpected existing replica assignment, partition id 0 is missing. Assignment: {dict(existing)}"
        )
    partition0 = existing[0]
    if not partition0:
        raise ValueError("Unexpected existing replica assignment, partition 0 has no replicas.")
    to_add = new_count - len(existing)
    if to_add <= 0:
        raise InvalidPartitions(
            f"Topic currently has {len(existing)} partitions, {new_count} would not be an increase."
        )
    start_index = next((i for i, b in enumerate(brokers) if b.id >= partition0[0]), 0)
    return assign_replicas(
        brokers,
        to_add,
        len(partition0),
        fixed_start_index=start_index,
        start_partition_id=len(existing),
        rng=rng,
    )


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """Kafka's ``getRackAlternatedBrokerList``: racks in name order, brokers by id within a rack,
    taking one broker from each rack in turn: {1: a, 2: a, 3: b} → [1, 3, 2]."""
    by_rack: dict[str, list[int]] = {}
    for broker_id, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker_id)
    queues = [sorted(by_rack[rack], reverse=True) for rack in sorted(by_rack)]
    result: list[int] = []
    rack_index = 0
    while len(result) < len(racks):
        queue = queues[rack_index]
        if queue:
            result.append(queue.pop())
        rack_index = (rack_index + 1) % len(queues)
    return result


def _start_and_shift(fixed_start_index: int, n_brokers: int, rng: random.Random) -> tuple[int, int]:
    if fixed_start_index >= 0:
        return fixed_start_index, fixed_start_index
    start_index = rng.randrange(n_brokers)
    return start_index, rng.randrange(n_brokers)


def _replica_index(first_replica_index: int, shift: int, replica_index: int, n_brokers: int) -> int:
    return (first_replica_index + 1 + (shift + replica_index) % (n_brokers - 1)) % n_brokers


def _assign_rack_unaware(
    n_partitions: int,
    replication_factor: int,
    broker_ids: Sequence[int],
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random,
) -> dict[int, tuple[int, ...]]:
    n = len(broker_ids)
    start_index, shift = _start_and_shift(fixed_start_index, n, rng)
    result: dict[int, tuple[int, ...]] = {}
    for partition_id in range(max(0, start_partition_id), max(0, start_partition_id) + n_partitions):
        if partition_id > 0 and partition_id % n == 0:
            shift += 1
        first = (partition_id + start_index) % n
        followers = (broker_ids[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1))
        result[partition_id] = (broker_ids[first], *followers)
    return result


def _assign_rack_aware(
    n_partitions: int,
    replication_factor: int,
    racks: Mapping[int, str],
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random,
) -> dict[int, tuple[int, ...]]:
    n_racks = len(set(racks.values()))
    arranged = rack_alternated_brokers(racks)
    n = len(arranged)
    start_index, shift = _start_and_shift(fixed_start_index, n, rng)
    result: dict[int, tuple[int, ...]] = {}
    for partition_id in range(max(0, start_partition_id), max(0, start_partition_id) + n_partitions):
        if partition_id > 0 and partition_id % n == 0:
            shift += 1
        first = (partition_id + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks_used = {racks[leader]}
        brokers_used = {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = arranged[_replica_index(first, shift * n_racks, k, n)]
                rack = racks[broker]
                k += 1
                # Skip a broker whose rack already has a replica while some rack has none, and a
                # broker that already has a replica while some broker has none.
                if (rack not in racks_used or len(racks_used) == n_racks) and (
                    broker not in brokers_used or len(brokers_used) == n
                ):
                    replicas.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    break
        result[partition_id] = tuple(replicas)
    return result
