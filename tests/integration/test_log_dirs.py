"""``GET /v1/log-dirs`` against real agents: every replica with its size, in the shape
``kafka-log-dirs --describe`` prints, read back by the feeder's own reader."""

from __future__ import annotations

from typing import Any

import pytest

from reassignd.feeder.inputs import parse_log_dirs
from reassignd.zk.client import ZkClient
from tests.integration.harness import Kit, active_one, eventually, wait_brokers
from tests.integration.reassignment_helpers import make_topic

pytestmark = pytest.mark.timeout(120)


async def test_log_dirs_report_every_replica_and_its_size(kit: Kit, zk: ZkClient) -> None:
    c = kit.controller(9000, 2.0)
    await active_one(c)
    kit.cluster(3)
    await wait_brokers(c, {1, 2, 3})
    await make_topic(zk, "sized", {0: (1, 2), 1: (2, 3)}, initial_bytes=250_000)

    async def settled() -> dict[str, Any] | None:
        code, body = await c.get("/v1/log-dirs")
        assert code == 200, body
        sizes = parse_log_dirs(body, "GET /v1/log-dirs")
        return body if sizes == {("sized", 0): 250_000, ("sized", 1): 250_000} else None

    body = await eventually(settled, what="both partitions reported at their size")
    hosted = {
        b["broker"]: sorted(p["partition"] for d in b["logDirs"] for p in d["partitions"])
        for b in body["brokers"]
    }
    assert hosted == {1: ["sized-0"], 2: ["sized-0", "sized-1"], 3: ["sized-1"]}
    code, only = await c.get("/v1/log-dirs?broker=3")
    assert code == 200 and [b["broker"] for b in only["brokers"]] == [3]
    code, bad = await c.get("/v1/log-dirs?broker=x")
    assert code == 400 and "broker" in bad["error_message"]
