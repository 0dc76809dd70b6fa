"""README.md's "Run it by hand", run as written: its first shell block starts the daemons (a
ZooKeeper from ``python -m reassignd.zk``, the controller with the Kafka listener, four agents),
then each block runs in order — Python blocks in one namespace, as typed into one interpreter, and
shell commands to their end — with only the ports changed (free ones) and ``.venv/bin/`` replaced by
this interpreter. The topic is created with its simulated size through Kafka's own admin client,
DescribeConfigs lists that size, the move shows byte-level progress, and the cancel takes the
partition back to its original replicas."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reassignd.zk.server import free_port
from tests.integration.harness import eventually, http_get

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parents[2]
PORTS = ("2181", "8080", "9092")


def by_hand_blocks() -> list[tuple[str, str]]:
    """The section's fenced blocks, in order: (language, text)."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Run it by hand\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(sh|python)\n(.*?)```", section, flags=re.DOTALL)


def localized(text: str, ports: dict[str, str]) -> str:
    for written, free in ports.items():
        text = re.sub(rf"\b{written}\b", free, text)
    return text


def command(line: str) -> list[str]:
    """A shell line as argv: the comment dropped, ``.venv/bin/...`` run by this interpreter."""
    argv = shlex.split(line, comments=True)
    if argv[0] == ".venv/bin/python":
        return [sys.executable, *argv[1:]]
    if argv[0] == ".venv/bin/reassignd":
        return [sys.executable, "-m", "reassignd", *argv[1:]]
    return argv


async def test_the_readme_run_by_hand(tmp_path: Path) -> None:
    blocks = by_hand_blocks()
    assert [language for language, _ in blocks] == ["sh", "python", "sh", "python"]
    ports = {written: str(free_port()) for written in PORTS}
    daemons: list[subprocess.Popen[bytes]] = []
    logs = []
    try:
        for i, line in enumerate(localized(blocks[0][1], ports).splitlines()):
            log = (tmp_path / f"daemon-{i}.log").open("wb")
            logs.append(log)
            daemons.append(start(command(line), log))
        url = f"http://127.0.0.1:{ports['8080']}"

        async def four_brokers() -> bool:
            try:
                code, status = await http_get(url + "/v1/status")
            except OSError:
                return False
            return code == 200 and status["active"] and len(status["brokers"]["live"]) == 4

        await eventually(four_brokers, timeout_s=90, what="the controller active with four brokers")

        namespace: dict[str, Any] = {}
        created = _run_python(localized(blocks[1][1], ports), namespace)
        # DescribeConfigs lists the size given at creation
        assert "reassignd.sim.initial.bytes" in created and "300000000" in created, created
        assert "orders" in created

        [curl] = localized(blocks[2][1], ports).strip().splitlines()
        seen: list[int] = []

        async def progress_shown() -> bool:
            done = await asyncio.to_thread(
                subprocess.run, command(curl), capture_output=True, text=True, timeout=30, check=True
            )
            moving = [p for t in json.loads(done.stdout)["topics"] for p in t["partitions"]]
            seen.extend(p["progress"]["bytes_done"] for p in moving if p.get("progress"))
            return any(0 < b < 300_000_000 for b in seen)

        await eventually(
            progress_shown, timeout_s=60, interval_s=0.5, what=f"bytes copied part-way (seen {seen})"
        )

        _run_python(localized(blocks[3][1], ports), namespace)

        async def back_home() -> bool:
            code, topic = await http_get(url + "/v1/topics/orders")
            if code != 200:
                return False
            [p0] = [p for p in topic["partitions"] if p["partition"] == 0]
            return bool(p0["replicas"] == [1, 2] and not p0.get("adding_replicas"))

        await eventually(back_home, timeout_s=60, what="orders-0 back on brokers 1 and 2")
        # Ctrl-C stops each daemon cleanly
        for daemon in reversed(daemons):
            daemon.send_signal(signal.SIGINT)
            assert daemon.wait(timeout=30) == 0, f"{daemon.args!r}: see the logs in {tmp_path}"
    finally:
        for daemon in daemons:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait(timeout=10)
        for log in logs:
            log.close()


def start(argv: list[str], log: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)


def _run_python(source: str, namespace: dict[str, Any]) -> str:
    """``source`` run in ``namespace`` (one interpreter session); what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "README.md", "exec"), namespace)
    return out.getvalue()
