"""Demotion's ZooKeeper writes under faults: the controller's connection cut right after the
demotion's record, after the reorder it makes, and after promotion's delete of the record. The
client's retry ends with broker 1 last everywhere and out of every leadership, its record holding
the orders before; or, promoted, with every order and leadership back and no record left."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.demotion_scenarios import DEMOTION_POINTS, proxy_cut_demotion
from tests.faults.scenarios import Env

pytestmark = pytest.mark.faults


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", DEMOTION_POINTS)
async def test_demotion_survives_a_cut_after_its_write(env: Env, point: str) -> None:
    outcome = await proxy_cut_demotion(env, 17, point)
    scenarios.assert_clean(outcome, env)
