"""``reassignd feed plan --master spark://HOST:PORT`` on a Spark standalone cluster: a master and two
workers started from the pyspark package (its ``bin/spark-class``, nothing downloaded), bound to
127.0.0.1, each worker with one core, so the plan's tasks run in two executor JVMs with their own
Python workers. The plan's files are the same as with ``local[*]``. Every process is stopped at
the end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from reassignd.testing.polling import eventually
from reassignd.zk.server import free_port
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
        self.procs: list[subprocess.Popen[bytes]] = []
        self.log_files: list[BinaryIO] = []
        self.env = {
            **os.environ,
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,  # the executors' Python: reassignd is importable there
        }
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

    def start(self, workers: int) -> None:
        self._start(
            "master", MASTER, "--host", "127.0.0.1", "--port", str(self.port),
            "--webui-port", str(self.ui_port), "--properties-file", str(self.properties),
        )  # fmt: skip
        for i in range(workers):
            work = self.tmp / f"worker-{i}"
            work.mkdir()
            self._start(
                f"worker-{i}", WORKER, self.url, "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                "--webui-port", "0", "--work-dir", str(work), "--properties-file", str(self.properties),
            )  # fmt: skip

    async def alive_workers(self) -> int:
        import aiohttp  # noqa: PLC0415

        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{self.ui_port}/json/") as resp,
        ):
            text = await resp.text()
        try:  # the master's UI may answer its HTML page while it starts
            doc = json.loads(text)
        except ValueError:
            return 0
        return int(doc.get("aliveworkers", 0))

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


def feed_plan(master: str, cluster_file: Path, sizes: Path, out: Path, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable, "-m", "reassignd", "feed", "plan", "--cluster-file", str(cluster_file),
            "--sizes", str(sizes), "--goal", "decommission:4,8", "--goal", "rebalance:bytes",
            "--tasks", "4", "--batch-size", "20", "--seed", "7", "--master", master, "--out", str(out),
        ],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    batches = json.loads((out / "batches.json").read_text())
    del batches["created_at"]  # the one field that depends on the clock
    return {
        "plan": json.loads((out / "plan.json").read_text()),
        "rollback": json.loads((out / "rollback.json").read_text()),
        "batches": batches,
        "summary": done.stdout,
    }


async def test_a_standalone_cluster_plans_what_local_mode_plans(
    standalone: Standalone, tmp_path: Path
) -> None:
    cluster_file, sizes = write_inputs(tmp_path)
    standalone.start(workers=2)
    try:
        await eventually(lambda: _two(standalone), timeout_s=120, what="two Spark workers registered")
    except AssertionError:
        raise AssertionError(standalone.logs()) from None

    on_cluster = feed_plan(standalone.url, cluster_file, sizes, tmp_path / "cluster", standalone.env)
    local = feed_plan("local[*]", cluster_file, sizes, tmp_path / "local", standalone.env)
    assert on_cluster == local
    assert on_cluster["plan"]["partitions"]  # something moved
    # the tasks ran on the workers: each worker started an executor for the application
    executors = [d for w in (0, 1) for d in (standalone.tmp / f"worker-{w}").glob("app-*/*")]
    assert len(executors) == 2, standalone.logs()


async def _two(standalone: Standalone) -> bool:
    return await standalone.alive_workers() == 2
