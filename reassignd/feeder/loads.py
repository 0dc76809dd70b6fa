"""What each broker holds, per group of partitions: the numbers budgets are cut from. Pure.

:func:`group_loads` runs once per Spark task (or per slice in the local planner); the driver adds
the groups up with :func:`total_loads`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from reassignd.feeder.model import CURRENT, SIZE, TOPIC, Row, moved_bytes

# A broker's load vector: everything it holds, then the part of it the plan may move (--topics).
BYTES, REPLICAS, LEADERS, SEL_BYTES, SEL_REPLICAS, SEL_LEADERS = range(6)
Load = tuple[int, int, int, int, int, int]
ZERO: Load = (0, 0, 0, 0, 0, 0)


def group_loads(rows: Iterable[Row], selects: Callable[[str], bool]) -> tuple[dict[int, Load], int]:
    """Per broker of one group: its load vector; and the bytes the group's moves copy so far."""
    acc: dict[int, list[int]] = {}
    copied = 0
    for row in rows:
        size, replicas = row[SIZE], row[CURRENT]
        chosen = selects(row[TOPIC])
        copied += moved_bytes(row)
        for i, b in enumerate(replicas):
            v = acc.get(b)
            if v is None:
                v = acc[b] = [0, 0, 0, 0, 0, 0]
            v[BYTES] += size
            v[REPLICAS] += 1
            if i == 0:
                v[LEADERS] += 1
            if chosen:
                v[SEL_BYTES] += size
                v[SEL_REPLICAS] += 1
                if i == 0:
                    v[SEL_LEADERS] += 1
    return {b: (v[0], v[1], v[2], v[3], v[4], v[5]) for b, v in acc.items()}, copied


def add_loads(a: Load, b: Load) -> Load:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5])


def total_loads(groups: Sequence[Mapping[int, Load]], brokers: Iterable[int]) -> dict[int, Load]:
    """Every broker's load over all groups (brokers holding nothing get zeros)."""
    out: dict[int, Load] = dict.fromkeys(brokers, ZERO)
    for loads in groups:
        for b, v in loads.items():
            out[b] = add_loads(out.get(b, ZERO), v)
    return out


def balance(values: Iterable[int]) -> float:
    """max ÷ mean of ``values`` (1.0 when all are zero)."""
    vs = list(values)
    total = sum(vs)
    if not vs or total == 0:
        return 1.0
    return max(vs) / (total / len(vs))
