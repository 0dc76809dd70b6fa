"""SIGKILLs of the active controller at seeded points of a 500-partition move."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.scenarios import Env

pytestmark = [pytest.mark.faults, pytest.mark.slow]

SEEDS = (7, 8)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", SEEDS)
async def test_active_controller_killed_during_a_500_partition_move(env: Env, seed: int) -> None:
    outcome = await scenarios.controller_kills(env, seed, partitions=500)
    scenarios.assert_clean(outcome, env)
