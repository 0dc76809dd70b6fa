"""The controller's ZooKeeper connection cut right after the server applied one of its writes
(the reply never reaches it): during the election, phase U, phase A, a group commit of queued
requests, a broker failure's state writes and the failover load; and its link slow, then gone
past the session timeout."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.scenarios import CUT_POINTS, Env

pytestmark = pytest.mark.faults

SEEDS = (5,)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("point", CUT_POINTS)
async def test_connection_cut_after_a_write(env: Env, seed: int, point: str) -> None:
    outcome = await scenarios.proxy_cut(env, seed, point)
    scenarios.assert_clean(outcome, env)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("seed", SEEDS)
async def test_slow_then_lost_link_to_zookeeper_mid_move(env: Env, seed: int) -> None:
    outcome = await scenarios.proxy_outage(env, seed)
    scenarios.assert_clean(outcome, env)
