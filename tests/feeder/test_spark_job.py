"""The plan on a real local Spark context (``local[2]``, one per module): the same plan as the
pure planner, and ``reassignd feed plan`` end to end on input files, its files accepted by the
readers of ``admin reassign --execute`` and ``admin batch submit``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from reassignd import cli
from reassignd.admin.batch_command import read_batch_file
from reassignd.admin.command_line import read_plan_file
from reassignd.feeder import __main__ as feeder_main
from reassignd.feeder.disks import usage_spread
from reassignd.feeder.goals import Decommission, DiskBalance, Goal, PlanOptions, Rebalance
from reassignd.feeder.model import with_dirs
from reassignd.feeder.planner import plan_locally
from reassignd.feeder.spark_job import plan_on_spark
from reassignd.plan_picture import SVG_NS
from tests.feeder.conftest import kafka_cluster
from tests.feeder.spark_env import fast_jvm_env
from tests.feeder.spark_inputs import write_inputs

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def test_spark_plans_what_the_pure_planner_plans(spark: Any) -> None:
    cluster = kafka_cluster(brokers=12, racks=3, topics=12, partitions=30)
    goals: list[Goal] = [Decommission(frozenset({2, 7})), Rebalance("bytes")]
    on_spark = plan_on_spark(spark, cluster, goals, PlanOptions(seed=3), tasks=3)
    local = plan_locally(cluster, goals, PlanOptions(seed=3), tasks=3)
    assert on_spark.moves == local.moves and on_spark.moves
    assert on_spark.after == local.after and on_spark.before == local.before
    assert on_spark.copied_bytes == local.copied_bytes


def test_spark_balances_dirs_as_the_pure_planner_does(spark: Any) -> None:
    cluster = kafka_cluster(brokers=6, racks=3, topics=4, partitions=30)
    # every replica in /a, /b empty and twice as large: the disk goal has every broker to do
    dirs = {(t, p, b): "/a" for t, p, _, rs, _ in cluster.rows for b in rs}
    caps = {b: {"/a": 10**12, "/b": 2 * 10**12} for b in cluster.racks}
    cluster = with_dirs(cluster, dirs, caps)
    goals: list[Goal] = [Decommission(frozenset({6})), DiskBalance()]
    on_spark = plan_on_spark(spark, cluster, goals, PlanOptions(seed=1), tasks=3)
    local = plan_locally(cluster, goals, PlanOptions(seed=1), tasks=3)
    assert on_spark.dir_moves == local.dir_moves and on_spark.dir_moves
    assert on_spark.dirs_after == local.dirs_after
    spread = usage_spread(local.dirs_after)
    assert all(spread[b] < 1.05 for b in range(1, 7)), spread  # 6 is empty: 1.0
    assert not any(m.broker == 6 for m in local.dir_moves)  # its replicas all left


def test_feed_plan_end_to_end(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster_file, sizes = write_inputs(tmp_path)
    out = tmp_path / "plan"
    argv = [
        "feed",
        "plan",
        "--cluster-file",
        str(cluster_file),
        "--sizes",
        str(sizes),
        "--master",
        "local[2]",
    ]
    code = cli.run([*argv, "--goal", "decommission:4,8", "--batch-size", "20", "--out", str(out)], {})
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert sorted(p.name for p in out.iterdir()) == [
        "batches.json",
        "plan.json",
        "plan.svg",
        "rollback.json",
        "summary.txt",
    ]
    assert printed.out == (out / "summary.txt").read_text()
    plan, rollback = read_plan_file(str(out / "plan.json")), read_plan_file(str(out / "rollback.json"))
    assert plan.partitions == rollback.partitions and plan.partitions
    for tp, replicas in plan.targets.items():
        assert not {4, 8} & set(replicas)
        assert {4, 8} & set(rollback.targets[tp])
    bodies = read_batch_file(str(out / "batches.json"))
    assert sum(b.partitions for b in bodies) == len(plan.entries) and all(b.partitions <= 20 for b in bodies)
    doc = json.loads((out / "batches.json").read_text())
    assert (
        doc["predicted"]["bytes_per_broker_after"]["4"]
        == doc["predicted"]["bytes_per_broker_after"]["8"]
        == 0
    )
    for body in doc["batches"]:
        for p in body["partitions"]:
            assert tuple(p["expected_replicas"]) == rollback.targets[(p["topic"], p["partition"])]
    # plan.svg: a bar per broker, metric and phase; its bytes those batches.json predicts
    drawn = {
        (b.get("data-broker"), b.get("data-metric"), b.get("data-phase")): int(b.get("data-value", ""))
        for b in ET.parse(out / "plan.svg").getroot().iter(f"{{{SVG_NS}}}rect")
        if "data-metric" in b.attrib
    }
    for phase in ("before", "after"):
        per_broker = doc["predicted"][f"bytes_per_broker_{phase}"]
        assert {k[0]: v for k, v in drawn.items() if k[1:] == ("bytes", phase)} == per_broker
        partitions = sum(len(t["partitions"]) for t in json.loads(cluster_file.read_text())["topics"])
        assert sum(v for k, v in drawn.items() if k[1:] == ("leaders", phase)) == partitions
    assert drawn[("4", "replicas", "after")] == drawn[("8", "replicas", "after")] == 0
    assert drawn[("4", "replicas", "before")] > 0
    replica_totals = [
        sum(v for k, v in drawn.items() if k[1:] == ("replicas", p)) for p in ("before", "after")
    ]
    assert replica_totals[0] == replica_totals[1] > 0  # the plan keeps every partition's replication factor

    # --dry-run: the same summary, nothing written
    dry = tmp_path / "dry"
    assert (
        cli.run(
            [*argv, "--goal", "decommission:4,8", "--batch-size", "20", "--out", str(dry), "--dry-run"], {}
        )
        == 0
    )
    assert capsys.readouterr().out.replace(str(dry), str(out)) == printed.out
    assert not dry.exists()
    assert spark.parallelize([1, 2]).sum() == 3  # the module's context was not stopped


def test_the_same_entry_under_spark_submit(tmp_path: Path) -> None:
    """The line the README gives for a Spark cluster, on local[1]: spark-submit's master is used.
    Run as from the virtualenv pyspark is installed in (its ``bin`` first on the path: the script
    finds its Spark there), its JVMs with tests/feeder/spark_env.py's flags."""
    cluster_file, sizes = write_inputs(tmp_path)
    spark_submit = Path(sys.executable).parent / "spark-submit"
    entry = Path(feeder_main.__file__)
    proc = subprocess.run(
        [
            str(spark_submit),
            "--master",
            "local[1]",
            str(entry),
            "plan",
            "--cluster-file",
            str(cluster_file),
            "--sizes",
            str(sizes),
            "--goal",
            "decommission:5",
            "--dry-run",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env=fast_jvm_env({**os.environ, "PATH": f"{spark_submit.parent}{os.pathsep}{os.environ['PATH']}"}),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("plan plan-") and "decommission:5" in proc.stdout
