"""SIGKILLs of the active controller at seeded points of a 500-partition move; and of a smaller
move on the secured ZooKeeper (every process authenticated, Kafka's ACLs on every znode)."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.acls import assert_kafka_acls
from tests.faults.scenarios import Env

pytestmark = [pytest.mark.faults, pytest.mark.slow]

SEEDS = (7, 8)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", SEEDS)
async def test_active_controller_killed_during_a_500_partition_move(env: Env, seed: int) -> None:
    outcome = await scenarios.controller_kills(env, seed, partitions=500)
    scenarios.assert_clean(outcome, env)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("secured", [True], ids=["sasl"])
async def test_active_controller_killed_mid_move_on_a_secured_zookeeper(env: Env, secured: bool) -> None:
    """Each controller started again authenticates at once; the one elected resumes the move
    with the znodes its predecessor created under Kafka's ACLs."""
    outcome = await scenarios.controller_kills(env, SEEDS[0], partitions=40)
    scenarios.assert_clean(outcome, env)
    await assert_kafka_acls(env.zk)
