"""``reassignd feed plan --master spark://HOST:PORT`` on a Spark standalone cluster: a master and a
worker started from the pyspark package (its ``bin/spark-class``, nothing downloaded), bound to
127.0.0.1, the worker once the master is ALIVE; the worker has two cores and the application
one core per executor, so the plan's tasks run in two executor JVMs with their own Python workers (the application starts its jobs
once both have registered). The plan's files are those the pure planner makes from the same
input, read and written by the same code (the pure planner plans what ``local[*]`` plans:
tests/feeder/test_spark_job.py). Every process is stopped at the end; every JVM starts with
tests/feeder/spark_env.py's flags."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from reassignd.config import load_command
from reassignd.feeder.command_line import FeedPlanCommand
from reassignd.feeder.plan_command import check_goals, load_cluster, plan_settings, write_outputs
from reassignd.feeder.planner import plan_locally
from reassignd.testing.polling import eventually
from reassignd.zk.server import free_port
from tests.feeder.spark_env import fast_jvm_env
from tests.feeder.spark_inputs import write_inputs

pytestmark = [pytest.mark.spark, pytest.mark.timeout(420)]
pyspark = pytest.importorskip("pyspark")  # the unit loop installs no Spark

SPARK_HOME = Path(pyspark.__file__).parent
MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


class Standalone:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        tmp.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.ui_port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.work = tmp / "worker"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.log_files: list[BinaryIO] = []
        self.env = fast_jvm_env(
            {
                **os.environ,
                "SPARK_HOME": str(SPARK_HOME),
                "SPARK_LOCAL_IP": "127.0.0.1",
                "PYSPARK_PYTHON": sys.executable,  # the executors' Python: reassignd is importable there
            },
            # an application takes the worker's two cores as two executors and runs its first
            # job once both have registered (the plan's tasks are spread over both)
            "spark.cores.max=2",
            "spark.executor.cores=1",
            "spark.executor.memory=512m",
            "spark.scheduler.minRegisteredResourcesRatio=1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime=240s",
        )
        # no REST submission server (a fixed port, 6066)
        self.properties = tmp / "spark.properties"
        self.properties.write_text("spark.master.rest.enabled false\n")

    def _start(self, name: str, *args: str) -> None:
        log = (self.tmp / f"{name}.log").open("wb")
        self.log_files.append(log)
        self.procs.append(
            subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=self.tmp,
                start_new_session=True,
            )
        )

    def start_master(self) -> None:
        self._start(
            "master", MASTER, "--host", "127.0.0.1", "--port", str(self.port),
            "--webui-port", str(self.ui_port), "--properties-file", str(self.properties),
        )  # fmt: skip

    def start_worker(self) -> None:
        """A worker that asks a master not yet ALIVE (its RPC port opens a moment before) is
        told "standby" and asks again 5–15 s later: start it once the master is ALIVE."""
        self.work.mkdir()
        self._start(
            "worker", WORKER, self.url, "--host", "127.0.0.1", "--cores", "2", "--memory", "1g",
            "--webui-port", "0", "--work-dir", str(self.work), "--properties-file", str(self.properties),
        )  # fmt: skip

    async def master_alive(self) -> dict[str, Any] | None:
        """The master's state once it is ALIVE (it leads and accepts workers and applications)."""
        status = await self.master_status()
        return status if status is not None and status.get("status") == "ALIVE" else None

    async def master_status(self) -> dict[str, Any] | None:
        """The master's state (its UI's JSON) once it serves it."""
        import aiohttp  # noqa: PLC0415

        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{self.ui_port}/json/") as resp,
        ):
            text = await resp.text()
        try:  # the master's UI may answer its HTML page while it starts
            doc: dict[str, Any] = json.loads(text)
        except ValueError:
            return None
        return doc

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        for log in self.log_files:
            log.close()

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in sorted(self.tmp.glob("*.log")))


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[Standalone]:
    cluster = Standalone(tmp_path / "spark")
    try:
        yield cluster
    finally:
        cluster.stop()


PLAN_ARGS = (
    "feed", "plan", "--goal", "decommission:4,8", "--goal", "rebalance:bytes", "--tasks", "4",
    "--batch-size", "20", "--seed", "7",
)  # fmt: skip


async def feed_plan_process(
    master: str, cluster_file: Path, sizes: Path, out: Path, env: dict[str, str]
) -> dict[str, Any]:
    """``python -m reassignd feed plan ... --master MASTER``: its files and its summary."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "reassignd", *PLAN_ARGS, "--cluster-file", str(cluster_file),
        "--sizes", str(sizes), "--master", master, "--out", str(out),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode == 0, stderr.decode(errors="replace")
    return plan_files(out, stdout.decode())


def pure_plan(cluster_file: Path, sizes: Path, out: Path) -> dict[str, Any]:
    """The same command line's settings and input, planned by the pure planner and written by
    the command's writer: its files and its summary."""
    argv = [*PLAN_ARGS, "--cluster-file", str(cluster_file), "--sizes", str(sizes), "--out", str(out)]
    command = load_command(argv, {})
    assert isinstance(command, FeedPlanCommand)
    settings = plan_settings(command.values)
    cluster = load_cluster(settings, sys.stderr)
    check_goals(settings.goals, cluster)
    result = plan_locally(cluster, settings.goals, settings.options, settings.tasks)
    summary, _ = write_outputs(result, settings, datetime.datetime.now(datetime.UTC))
    return plan_files(out, summary)


def plan_files(out: Path, summary: str) -> dict[str, Any]:
    batches = json.loads((out / "batches.json").read_text())
    del batches["created_at"]  # the one field that depends on the clock
    return {
        "plan": json.loads((out / "plan.json").read_text()),
        "rollback": json.loads((out / "rollback.json").read_text()),
        "batches": batches,
        "summary": summary,
    }


async def test_a_standalone_cluster_plans_what_the_pure_planner_plans(
    standalone: Standalone, tmp_path: Path
) -> None:
    cluster_file, sizes = write_inputs(tmp_path)
    standalone.start_master()
    try:
        await eventually(standalone.master_alive, timeout_s=120, what="the Spark master ALIVE")
    except AssertionError:
        raise AssertionError(standalone.logs()) from None
    # the driver starts while the worker starts and registers: its first job waits for both
    # executors
    standalone.start_worker()
    on_cluster = asyncio.create_task(
        feed_plan_process(standalone.url, cluster_file, sizes, tmp_path / "cluster", standalone.env)
    )
    local = pure_plan(cluster_file, sizes, tmp_path / "local")
    try:
        planned = await on_cluster
    except AssertionError as e:
        raise AssertionError(f"{e}\n{standalone.logs()}") from None
    assert planned == local
    assert planned["plan"]["partitions"]  # something moved
    status = await standalone.master_status()
    assert status is not None and status["aliveworkers"] == 1, status
    # the tasks ran on the worker: it started two executors for the application, each of which
    # ran some of them
    executors = sorted(standalone.work.glob("app-*/*"))
    assert len(executors) == 2, standalone.logs()
    for executor in executors:
        assert "Running task" in (executor / "stderr").read_text(errors="replace"), standalone.logs()
