"""Self-healing's writes under faults: the controller's ZooKeeper connection cut right after the
record of a lost broker, the first write of its healing batch, or the record's deletion. The heal
completes once, with one batch, and no record is left behind."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.healing_scenarios import HEAL_POINTS, proxy_cut_heal
from tests.faults.scenarios import Env

pytestmark = pytest.mark.faults


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", HEAL_POINTS)
async def test_self_healing_survives_a_cut_after_its_write(env: Env, point: str) -> None:
    outcome = await proxy_cut_heal(env, 11, point)
    scenarios.assert_clean(outcome, env)
