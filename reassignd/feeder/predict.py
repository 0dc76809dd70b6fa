"""How long a batch should take under the executor's caps. Pure.

A new replica copies its partition from the leader, so a move charges its bytes to the leader
(outgoing) and to each new replica's broker (incoming). Each broker replicates at most
``broker_bytes_per_s`` in each direction, shared evenly by the copies it takes part in.

:func:`predict_batch` simulates the executor on one batch: moves start in the batch's order
whenever the caps allow (``moves_per_broker`` moves adding a replica to a broker and, apart,
removing one from it; ``moves_in_cluster`` in all), each copy runs at the smaller of its two
brokers' shares, and a move ends when its last copy does. It also gives the lower bound no
schedule beats, the busiest broker's bytes in or out ÷ the rate (the executor's own
``lower_bound_makespan_s``). Batches are predicted one after the other.
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
    makespan_s: float  # simulated under the caps
    lower_bound_s: float


@dataclass(slots=True)
class _Move:
    leader: int
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    left: dict[int, float]  # bytes still to copy, per adding broker


def _simulate(moves: list[_Move], rate: float, per_broker: int, in_cluster: int) -> float:
    pending = [m for m in moves if m.adding]
    running: list[_Move] = []
    n_add: dict[int, int] = {}
    n_remove: dict[int, int] = {}
    now = 0.0
    while pending or running:
        waiting: list[_Move] = []
        for m in pending:
            fits = len(running) < in_cluster and all(n_add.get(b, 0) < per_broker for b in m.adding)
            if fits and all(n_remove.get(b, 0) < per_broker for b in m.removing):
                running.append(m)
                for b in m.adding:
                    n_add[b] = n_add.get(b, 0) + 1
                for b in m.removing:
                    n_remove[b] = n_remove.get(b, 0) + 1
            else:
                waiting.append(m)
        pending = waiting
        copies_in: dict[int, int] = {}
        copies_out: dict[int, int] = {}
        for m in running:
            for b, left in m.left.items():
                if left > 0:
                    copies_in[b] = copies_in.get(b, 0) + 1
                    copies_out[m.leader] = copies_out.get(m.leader, 0) + 1
        speeds = {
            (id(m), b): rate / max(copies_in[b], copies_out[m.leader])
            for m in running
            for b, left in m.left.items()
            if left > 0
        }
        step = min(
            (left / speeds[(id(m), b)] for m in running for b, left in m.left.items() if left > 0),
            default=0.0,
        )
        now += step
        finished: list[_Move] = []
        for m in running:
            for b in m.left:
                if m.left[b] > 0:
                    m.left[b] = max(0.0, m.left[b] - speeds[(id(m), b)] * step)
            if all(left <= 1e-6 for left in m.left.values()):
                finished.append(m)
        for m in finished:
            running.remove(m)
            for b in m.adding:
                n_add[b] -= 1
            for b in m.removing:
                n_remove[b] -= 1
    return now


def predict_batch(
    rows: Sequence[Row],
    broker_bytes_per_s: float = DEFAULT_REPLICATION_BYTES_PER_S,
    moves_per_broker: int = MOVES_PER_BROKER,
    moves_in_cluster: int = MOVES_IN_CLUSTER,
) -> BatchPrediction:
    bytes_in: dict[int, int] = {}
    bytes_out: dict[int, int] = {}
    total = 0
    moves: list[_Move] = []
    for row in rows:
        adding = tuple(b for b in row[CURRENT] if b not in row[ORIGINAL])
        removing = tuple(b for b in row[ORIGINAL] if b not in row[CURRENT])
        leader = row[ORIGINAL][0]
        moves.append(_Move(leader, adding, removing, dict.fromkeys(adding, float(row[SIZE]))))
        for b in adding:
            bytes_in[b] = bytes_in.get(b, 0) + row[SIZE]
            bytes_out[leader] = bytes_out.get(leader, 0) + row[SIZE]
            total += row[SIZE]
    busiest = max([*bytes_in.values(), *bytes_out.values(), 0])
    return BatchPrediction(
        len(rows),
        total,
        dict(sorted(bytes_in.items())),
        dict(sorted(bytes_out.items())),
        _simulate(moves, broker_bytes_per_s, moves_per_broker, moves_in_cluster),
        busiest / broker_bytes_per_s,
    )
