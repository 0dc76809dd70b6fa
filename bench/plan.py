"""Planner benchmark (issue 10, item 4): the Spark feeder against Kafka's ``--generate``.

A synthetic cluster: ``--brokers`` brokers (1,000) on ``--racks`` racks (10), topics of 100
partitions (RF 3) placed rack-aware as Kafka creates them, partition sizes log-normal (a heavy
tail: a few partitions hold much of the data). Two goals, each planned on a fresh copy:

* ``decommission-10``: ten brokers (one per rack) are emptied;
* ``rebalance:bytes``: bytes per broker evened out;
* both, one after the other (the bound: the decommission's plus the rebalance's after it).

For each it prints the planner's wall time on Spark ``local[2]`` (from the cluster in memory to
the moves collected, the JVM start not counted), the bytes it copies ÷ the lower bound, and the
balance after (max ÷ mean bytes per broker, over the brokers that keep data); then the same
figures for ``kafka-reassign-partitions --generate``: every partition assigned afresh by Kafka's
placement (``reassignd.controller.topics.placement``, the topic-creation algorithm) over the target
brokers. Lower bounds: decommission, the bytes on the decommissioned brokers; rebalance, the bytes
above ``mean × 1.02`` on each broker or the bytes missing below ``mean × 0.98``, the larger (the
band the planner aims at).

    python bench/plan.py                          # 100k partitions, then 1M
    python bench/plan.py --partitions 100000      # one size only

Goals (issue 10): 1M partitions planned in ≤ 5 min on local[2]; decommission moves ≤ 1.05× the
lower bound; balance after ≤ 1.05.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from reassignd.controller.topics.placement import BrokerMeta, assign_replicas
from reassignd.feeder.goals import Decommission, Goal, PlanOptions, Rebalance
from reassignd.feeder.loads import balance
from reassignd.feeder.model import CURRENT, ORIGINAL, SIZE, Cluster, Row, build_cluster
from reassignd.feeder.spark_job import plan_on_spark, spark_context

if TYPE_CHECKING:
    from pyspark import SparkContext

PARTITIONS_PER_TOPIC = 100
RF = 3


def synthetic(partitions: int, brokers: int, racks: int, seed: int) -> Cluster:
    rng = random.Random(seed)
    rack_of = {b: f"r{b % racks}" for b in range(1, brokers + 1)}
    metas = [BrokerMeta(b, rack_of[b]) for b in sorted(rack_of)]
    rows: list[Row] = []
    for t in range(partitions // PARTITIONS_PER_TOPIC):
        topic = f"topic-{t:05d}"
        scale = rng.lognormvariate(0, 1.0)  # topics differ in volume...
        for p, replicas in assign_replicas(metas, PARTITIONS_PER_TOPIC, RF, rng=rng).items():
            size = int(2**28 * scale * rng.lognormvariate(0, 0.5))  # ...and partitions within one
            rows.append((topic, p, size, replicas, replicas))
    return build_cluster(rack_of, rows)


def broker_bytes(rows: Sequence[Row], which: int, brokers: Sequence[int]) -> dict[int, int]:
    out = dict.fromkeys(brokers, 0)
    for row in rows:
        for b in row[which]:
            out[b] += row[SIZE]
    return out


def copied(rows: Sequence[Row]) -> int:
    return sum(r[SIZE] * len(set(r[CURRENT]) - set(r[ORIGINAL])) for r in rows)


def kafka_generate(cluster: Cluster, targets: Sequence[int], seed: int) -> list[Row]:
    """Every topic assigned afresh over ``targets``, as ``--generate`` does."""
    rng = random.Random(seed)
    metas = [BrokerMeta(b, cluster.racks[b]) for b in sorted(targets)]
    by_topic: dict[str, list[Row]] = {}
    for row in cluster.rows:
        by_topic.setdefault(row[0], []).append(row)
    out: list[Row] = []
    for topic, rows in by_topic.items():
        fresh = assign_replicas(metas, len(rows), RF, rng=rng)
        out.extend((topic, r[1], r[SIZE], r[ORIGINAL], fresh[r[1]]) for r in rows)
    return out


def min_ratio(loads: Mapping[int, int], keep: Sequence[int]) -> float:
    mean = sum(loads[b] for b in keep) / len(keep)
    return min(loads[b] for b in keep) / mean if mean else 1.0


def figures(
    name: str, rows: Sequence[Row], keep: Sequence[int], lower_bound: int, seconds: float | None
) -> str:
    after = broker_bytes(rows, CURRENT, keep)
    moved = copied(rows)
    wall = f"{seconds:7.1f} s" if seconds is not None else "      - "
    return (
        f"  {name:<22} wall {wall}  moved {moved / 2**40:8.2f} TiB = {moved / max(1, lower_bound):6.3f}× bound"
        f"  balance after {balance(after[b] for b in keep):.3f} (min/mean {min_ratio(after, keep):.3f})"
    )


def run(context: SparkContext, cluster: Cluster, goals: Sequence[Goal], seed: int) -> None:
    brokers = cluster.broker_ids
    leaving = {b for g in goals if isinstance(g, Decommission) for b in g.brokers}
    keep = [b for b in brokers if b not in leaving]
    before = broker_bytes(cluster.rows, ORIGINAL, brokers)
    start = time.monotonic()
    result = plan_on_spark(context, cluster, goals, PlanOptions(seed=seed))
    seconds = time.monotonic() - start
    bound = sum(s.lower_bound for s in result.steps if s.metric == "bytes")
    moved_rows = {(r[0], r[1]): r for r in result.moves}
    ours = [moved_rows.get((r[0], r[1]), r) for r in cluster.rows]
    name = " + ".join(map(str, goals))
    print(
        f"{name}: lower bound {bound / 2**40:.2f} TiB, balance before {balance(before[b] for b in keep):.3f}"
    )
    print(figures("reassignd feed plan", ours, keep, bound, seconds))
    start = time.monotonic()
    generated = kafka_generate(cluster, keep, seed)
    print(figures("kafka --generate", generated, keep, bound, time.monotonic() - start))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--partitions", type=int, action="append", help="repeatable; default 100000 and 1000000"
    )
    parser.add_argument("--brokers", type=int, default=1000)
    parser.add_argument("--racks", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--goals",
        default="decommission,rebalance,both",
        help="comma-separated: decommission, rebalance, both (decommission then rebalance:bytes)",
    )
    args = parser.parse_args(argv)
    context = spark_context(args.master)
    try:
        for n in args.partitions or [100_000, 1_000_000]:
            start = time.monotonic()
            cluster = synthetic(n, args.brokers, args.racks, args.seed)
            print(
                f"\n{len(cluster.rows):,} partitions (RF {RF}) on {args.brokers} brokers in {args.racks} racks, "
                f"{sum(r[SIZE] for r in cluster.rows) * RF / 2**50:.2f} PiB (generated in {time.monotonic() - start:.0f} s)"
            )
            decommission = Decommission(frozenset(range(1, 11)))
            goals: Mapping[str, list[Goal]] = {
                "decommission": [decommission],
                "rebalance": [Rebalance("bytes")],
                "both": [decommission, Rebalance("bytes")],
            }
            for name in args.goals.split(","):
                run(context, cluster, goals[name], args.seed)
    finally:
        context.stop()


if __name__ == "__main__":
    main()
