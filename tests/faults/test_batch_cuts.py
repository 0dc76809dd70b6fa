"""The batch executor's writes under faults: the controller's ZooKeeper connection cut right
after a write of the batch journal (at submission and at a later state change), of a throttle, of
the exact origins; and its session expiring mid-batch. The batch completes once, its throttles
come back exactly as they were, no origin is left behind."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.batch_scenarios import BATCH_POINTS, proxy_cut_batch
from tests.faults.scenarios import Env

pytestmark = pytest.mark.faults


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", BATCH_POINTS)
async def test_a_batch_survives_a_cut_after_an_executor_write(env: Env, point: str) -> None:
    outcome = await proxy_cut_batch(env, 7, point)
    scenarios.assert_clean(outcome, env)
