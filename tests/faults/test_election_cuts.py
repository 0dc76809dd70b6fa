"""Preferred-replica elections under faults: the controller's ZooKeeper connection cut right after
the state write of an election asked for by Kafka's legacy ``/admin/preferred_replica_election``
znode, after that znode's delete, and after the state write of an auto leader rebalance. Every
partition ends led by its preferred replica, elected exactly once, the znode gone, nothing offline."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.election_scenarios import ELECTION_POINTS, proxy_cut_election
from tests.faults.scenarios import Env

pytestmark = pytest.mark.faults


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", ELECTION_POINTS)
async def test_elections_survive_a_cut_after_their_write(env: Env, point: str) -> None:
    outcome = await proxy_cut_election(env, 11, point)
    scenarios.assert_clean(outcome, env)
