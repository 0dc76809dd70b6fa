"""The controller's ZooKeeper connection cut right after the server applied one of its writes
(the reply never reaches it): during the election, phase U, phase A, a group commit of queued
requests, a broker failure's state writes and the failover load; and its link slow, then gone
past the session timeout. A few of them on the secured ZooKeeper too: the connection the
controller opens again, or its new session, authenticates before its next write, and every
znode ends with Kafka's ACLs."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.acls import assert_kafka_acls
from tests.faults.scenarios import CUT_POINTS, Env

pytestmark = pytest.mark.faults

SEEDS = (5,)
SECURED_CUTS = ("election",)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    ("point", "secured"),
    [
        *((point, False) for point in CUT_POINTS),
        *(pytest.param(point, True, id=f"{point}-sasl") for point in SECURED_CUTS),
    ],
)
async def test_connection_cut_after_a_write(env: Env, seed: int, point: str, secured: bool) -> None:
    outcome = await scenarios.proxy_cut(env, seed, point)
    scenarios.assert_clean(outcome, env)
    if secured:
        await assert_kafka_acls(env.zk)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("secured", [False, True], ids=["open", "sasl"])
async def test_slow_then_lost_link_to_zookeeper_mid_move(env: Env, seed: int, secured: bool) -> None:
    outcome = await scenarios.proxy_outage(env, seed)
    scenarios.assert_clean(outcome, env)
    if secured:
        await assert_kafka_acls(env.zk)
