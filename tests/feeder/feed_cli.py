"""``reassignd`` commands as the feeder's end-to-end tests run them: in a process of its own, or in
this one (the command-line engine and the command a process runs, in a thread, so the test's
loop goes on serving an in-process controller); the output appended to a log file. And the plan
files read back."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from reassignd import cli
from tests.feeder.spark_env import fast_jvm_env

COMMAND_TIMEOUT_S = 300


async def reassignd(*args: str, log: Path) -> int:
    """``python -m reassignd ARGS`` with stdout and stderr appended to ``log``; its exit code."""
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "reassignd",
            *args,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            env=fast_jvm_env(os.environ),
        )
    return await asyncio.wait_for(proc.wait(), COMMAND_TIMEOUT_S)


async def reassignd_here(*args: str, log: Path) -> int:
    """``reassignd ARGS`` run by :func:`reassignd.cli.run` in a thread of this process, its
    output appended to ``log``; its exit code. ``feed plan`` plans on the Spark session this
    process runs (the ``spark`` fixture's). The root logger the command configures is given back
    as it was."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level

    def run() -> int:
        with log.open("a", encoding="utf-8") as out:
            return cli.run(list(args), {}, out, out)

    try:
        return await asyncio.wait_for(asyncio.to_thread(run), COMMAND_TIMEOUT_S)
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())
