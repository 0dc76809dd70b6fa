"""The plan on Spark: each group of partitions is one task; loads are aggregated by Spark.

Imported only by ``reassignd feed plan`` (pyspark is an optional extra; the controller never
imports this module). The RDD holds ``(group, rows)`` pairs, one per Spark partition; a step maps
every group through :func:`reassignd.feeder.moves.plan_group` with its own budget slice, and the
loads are a ``reduceByKey`` over ``((group, broker), load)``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reassignd.feeder.budget import Step, TaskBudget
from reassignd.feeder.disks import DirMove, balance_broker, budget_slices, excess_bytes, staying_replicas
from reassignd.feeder.goals import Goal, PlanOptions
from reassignd.feeder.loads import Load, add_loads, group_loads
from reassignd.feeder.model import CURRENT, ORIGINAL, Cluster, Row, split_groups
from reassignd.feeder.moves import plan_group
from reassignd.feeder.planner import PlanResult, group_count, run_plan, selector

if TYPE_CHECKING:
    from pyspark import RDD, SparkContext

DEFAULT_MASTER = "local[*]"
COPIED = -1  # the broker key under which a group reports the bytes its moves copy


class SparkMissing(RuntimeError):
    """pyspark is not installed; ``str(error)`` says how to install it."""


QUIET_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
"""


def _quiet_log_config() -> str:
    """A log4j2 file that keeps Spark's JVM to errors (written once per process)."""
    path = Path(tempfile.gettempdir()) / f"reassignd-feeder-log4j2-{os.getuid()}.properties"
    if not path.exists() or path.read_text() != QUIET_LOG4J2:
        path.write_text(QUIET_LOG4J2)
    return str(path)


def active_context() -> SparkContext | None:
    """The Spark context this process already runs (a notebook's session's, a test's), if any —
    also one another thread started (the context is one per process)."""
    try:
        from pyspark import SparkContext  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    return SparkContext._active_spark_context  # pyspark's one record of it


def spark_context(master: str | None, app_name: str = "reassignd-feed-plan") -> SparkContext:
    """A context on ``master``; None: the one spark-submit gave, else ``local[*]``. A context, not
    a SparkSession: the plan is RDDs only, and a session's SQL state cost as much CPU again as
    the context's own start (4.5 s against 6.0 s on the 2-core CI machine)."""
    try:
        from pyspark import SparkConf, SparkContext  # noqa: PLC0415 (optional dependency)
    except ImportError:
        raise SparkMissing(
            "feed plan needs pyspark: pip install 'reassignd[feeder]' (and a Java 17 runtime)"
        ) from None
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit
        master = DEFAULT_MASTER
    conf = (
        SparkConf()
        .setAppName(app_name)
        .set("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={_quiet_log_config()}")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
    )
    if master is not None:
        conf.setMaster(master)
    context = SparkContext.getOrCreate(conf)
    context.setLogLevel("ERROR")
    return context


def _load_items(item: tuple[int, list[Row]], topics: str | None) -> Iterator[tuple[tuple[int, int], Load]]:
    g, rows = item
    pattern = selector(topics)
    loads, copied = group_loads(
        rows, (lambda t: True) if pattern is None else (lambda t: pattern.fullmatch(t) is not None)
    )
    for b, v in loads.items():
        yield (g, b), v
    yield (g, COPIED), (copied, 0, 0, 0, 0, 0)


class SparkGroups:
    def __init__(self, rdd: RDD[tuple[int, list[Row]]], n: int) -> None:
        self.rdd = rdd
        self.n = n

    def loads(self, topics: str | None) -> tuple[list[dict[int, Load]], int]:
        pairs = self.rdd.flatMap(lambda item: _load_items(item, topics)).reduceByKey(add_loads).collect()
        out: list[dict[int, Load]] = [{} for _ in range(self.n)]
        copied = 0
        for (g, b), v in pairs:
            if b == COPIED:
                copied += v[0]
            else:
                out[g][b] = v
        return out, copied

    def apply(
        self,
        step: Step,
        budgets: Sequence[TaskBudget],
        racks: Mapping[int, str | None],
        rank: Mapping[int, int],
        topics: str | None,
    ) -> SparkGroups:
        sc = self.rdd.context
        shared = sc.broadcast((step, list(budgets), dict(racks), dict(rank), topics))

        def plan(item: tuple[int, list[Row]]) -> tuple[int, list[Row]]:
            s, bs, rk, rn, tp = shared.value
            g, rows = item
            return g, plan_group(rows, s, bs[g], rk, rn, tp)

        planned = self.rdd.map(plan, preservesPartitioning=True).cache()
        planned.count()
        self.rdd.unpersist()
        return SparkGroups(planned, self.n)

    def changed(self) -> list[Row]:
        rows: list[Row] = self.rdd.flatMap(
            lambda item: [r for r in item[1] if r[CURRENT] != r[ORIGINAL]]
        ).collect()
        return rows

    def dir_moves(
        self,
        log_dirs: Mapping[tuple[str, int, int], str],
        capacity: Mapping[int, Mapping[str, int]],
        budget_bytes: int | None,
        options: PlanOptions,
    ) -> list[DirMove]:
        """The disk goal with one task per group of brokers: each group's replicas are keyed by
        broker, every broker is planned on its own, its budget from its excess."""
        sc = self.rdd.context
        shared = sc.broadcast((dict(log_dirs), {b: dict(v) for b, v in capacity.items()}))
        per_broker = (
            self.rdd.flatMap(lambda item: staying_replicas(item[1], shared.value[0]))
            .groupByKey(self.n)
            .mapValues(list)
            .cache()
        )
        excess = dict(
            per_broker.map(lambda kv: (kv[0], excess_bytes(kv[1], shared.value[1].get(kv[0], {})))).collect()
        )
        slices = budget_slices(excess, budget_bytes)
        tolerance, topics = options.tolerance, options.topics

        def plan(kv: tuple[int, list[Any]]) -> list[DirMove]:
            b, rs = kv
            return balance_broker(b, rs, shared.value[1].get(b, {}), slices[b], tolerance, topics)

        moves: list[DirMove] = per_broker.flatMap(plan).collect()
        per_broker.unpersist()
        return sorted(moves)


def plan_on_spark(
    context: SparkContext,
    cluster: Cluster,
    goals: Sequence[Goal],
    options: PlanOptions,
    tasks: int | None = None,
) -> PlanResult:
    """The plan with one Spark task per group of partitions."""
    n = group_count(len(cluster.rows), tasks)
    groups = split_groups(cluster.rows, n)
    rdd = context.parallelize(list(enumerate(groups)), len(groups)).cache()
    return run_plan(cluster, goals, options, SparkGroups(rdd, len(groups)), len(groups))
