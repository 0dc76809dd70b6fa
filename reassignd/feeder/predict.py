"""How long the batches should take under the executor's caps. Pure.

A new replica copies its partition from the leader, so a move charges its bytes to the leader
(outgoing) and to each new replica's broker (incoming). Each broker replicates at most
``broker_bytes_per_s`` in each direction, shared by its moves in flight, so a batch cannot end
before its busiest broker has sent or received its bytes: the batch's predicted makespan is that
bound, ``max(bytes in, bytes out) / rate`` over its brokers (the executor's per-broker move cap
decides the order, not the total, while every broker keeps at least one move running). Batches
are counted one after the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reassignd.broker.settings import DEFAULT_REPLICATION_BYTES_PER_S
from reassignd.feeder.model import CURRENT, ORIGINAL, SIZE, Row

# The controller's defaults for a batch (reassignd controller --batch-moves-per-broker etc.).
MOVES_PER_BROKER = 5
MOVES_IN_CLUSTER = 1000


@dataclass(frozen=True, slots=True)
class BatchPrediction:
    moves: int
    bytes: int
    bytes_in: dict[int, int]
    bytes_out: dict[int, int]
    makespan_s: float


def predict_batch(
    rows: Sequence[Row], broker_bytes_per_s: float = DEFAULT_REPLICATION_BYTES_PER_S
) -> BatchPrediction:
    bytes_in: dict[int, int] = {}
    bytes_out: dict[int, int] = {}
    total = 0
    for row in rows:
        gained = [b for b in row[CURRENT] if b not in row[ORIGINAL]]
        if not gained:
            continue
        leader = row[ORIGINAL][0]
        for b in gained:
            bytes_in[b] = bytes_in.get(b, 0) + row[SIZE]
            bytes_out[leader] = bytes_out.get(leader, 0) + row[SIZE]
            total += row[SIZE]
    busiest = max([*bytes_in.values(), *bytes_out.values(), 0])
    return BatchPrediction(
        len(rows),
        total,
        dict(sorted(bytes_in.items())),
        dict(sorted(bytes_out.items())),
        busiest / broker_bytes_per_s,
    )
