"""Adaptive concurrency's journal write under faults: the controller's ZooKeeper connection cut
right after it journaled a change of a batch's caps. The batch completes once, every cap the
journal held stays within the bounds."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.adaptive_scenarios import proxy_cut_caps
from tests.faults.scenarios import Env

pytestmark = pytest.mark.faults


@pytest.mark.timeout(180)
async def test_a_batch_survives_a_cut_after_a_caps_write(env: Env) -> None:
    outcome = await proxy_cut_caps(env, 13)
    scenarios.assert_clean(outcome, env)
