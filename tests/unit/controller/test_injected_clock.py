"""The instance's wall clock is injected, and the record log takes it: every record the controller
emits carries the injected time, never the machine's. A real controller on a real ZooKeeper."""

from __future__ import annotations

import pytest

from reassignd.stream.records import StreamRecord
from reassignd.testing.controller import in_process_controller
from reassignd.testing.polling import eventually
from reassignd.zk import paths
from reassignd.zk.client import ZkClient

pytestmark = pytest.mark.timeout(120)

# 2001-09-09T01:46:40Z: far from any machine's clock, so a record timed by time.time() shows
INJECTED_S = 1_000_000_000.0


async def test_the_record_log_takes_the_injected_wall_clock(zk_connect: str, zk: ZkClient) -> None:
    await zk.ensure_path(paths.BROKER_TOPICS)
    async with in_process_controller(zk_connect, http=False, wall_clock=lambda: INJECTED_S) as c:
        await c.until_active()
        records = c.controller.records

        def elected() -> list[StreamRecord]:
            return [r for r in records.history if r.type == "controller_elected"]

        await eventually(lambda: bool(elected()), 20.0, what="the election recorded")
        assert list(records.history), "the controller recorded nothing"
        assert {r.time_ms for r in records.history} == {int(INJECTED_S * 1000)}
        assert elected()[0].to_dict()["time"] == "2001-09-09T01:46:40.000Z"
