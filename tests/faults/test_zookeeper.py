"""ZooKeeper itself fails: frozen past every timeout, restarted mid-move (a server of the
module's own, never the session-wide one); the restart also on the secured ZooKeeper, where
every session authenticates again on its new connection (or as a new session) and every znode
ends with Kafka's ACLs."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.acls import assert_kafka_acls
from tests.faults.scenarios import Env

pytestmark = pytest.mark.faults

SEEDS = (11,)


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("seed", SEEDS)
async def test_frozen_zookeeper_then_some_controller_is_active_again(own_env: Env, seed: int) -> None:
    outcome = await scenarios.zookeeper_freeze(own_env, seed)
    scenarios.assert_clean(outcome, own_env)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("secured", [False, True], ids=["open", "sasl"])
async def test_zookeeper_restarted_mid_move(own_env: Env, seed: int, secured: bool) -> None:
    outcome = await scenarios.zookeeper_restart(own_env, seed)
    scenarios.assert_clean(outcome, own_env)
    if secured:
        await assert_kafka_acls(own_env.zk)
