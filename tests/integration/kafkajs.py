"""KafkaJS (the Node client, written apart from Kafka's own) driven from tests: one admin call per
``node tests/kafkajs/admin.js`` run, its result and the requests KafkaJS sent (name, key, version)
back as JSON. The package is pinned in ``tests/kafkajs/package.json``; ``scripts/bootstrap.sh``
installs it (``npm ci``) beside Debian's Node.js."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

KAFKAJS_DIR = Path(__file__).resolve().parent.parent / "kafkajs"
NODE = shutil.which("node")
CALL_TIMEOUT_S = 90.0

needs_kafkajs = pytest.mark.skipif(
    NODE is None or not (KAFKAJS_DIR / "node_modules" / "kafkajs" / "package.json").exists(),
    reason="Node.js or KafkaJS is not installed (scripts/bootstrap.sh installs both)",
)


async def kafkajs(address: str, method: str, args: Any = None) -> dict[str, Any]:
    """``admin[method](args)`` with a KafkaJS admin client bootstrapped at ``address``:
    ``{"result": ...}`` or ``{"error": {"name", "type", "code", "message"}}``, and ``"requests"``."""
    assert NODE is not None
    proc = await asyncio.create_subprocess_exec(
        NODE,
        str(KAFKAJS_DIR / "admin.js"),
        address,
        method,
        json.dumps(args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), CALL_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode == 0, err.decode(errors="replace")
    answer: dict[str, Any] = json.loads(out.decode().splitlines()[-1])
    return answer
