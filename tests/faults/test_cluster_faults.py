"""Faults around the controller's work: a KIP-236 cancel while no controller runs, a topic
deleted and created again, an unclean leader election, broker agents killed mid-move."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.scenarios import Env

pytestmark = pytest.mark.faults

SEEDS = (3,)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", SEEDS)
async def test_reassign_cancel_created_while_no_controller_runs_rolls_back(env: Env, seed: int) -> None:
    outcome = await scenarios.cancel_while_no_controller(env, seed)
    scenarios.assert_clean(outcome, env)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("via", ["api", "znode"])
async def test_topic_created_again_then_partitions_added_through_its_znode(
    env: Env, seed: int, via: str
) -> None:
    outcome = await scenarios.recreate_topic(env, seed, via)
    scenarios.assert_clean(outcome, env)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", SEEDS)
async def test_unclean_election_when_every_isr_member_is_dead(env: Env, seed: int) -> None:
    outcome = await scenarios.unclean_election(env, seed)
    scenarios.assert_clean(outcome, env)


@pytest.mark.timeout(150)
@pytest.mark.parametrize("seed", SEEDS)
async def test_agents_killed_and_restarted_mid_move(env: Env, seed: int) -> None:
    outcome = await scenarios.agent_kills(env, seed)
    scenarios.assert_clean(outcome, env)
