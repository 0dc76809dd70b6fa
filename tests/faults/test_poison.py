"""Poison inputs (tests/faults/poison.py): each refused or skipped with its reason, the controller
kept, the epoch moved at most once, every accepted move completed."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.poison import CASES, poison
from tests.faults.scenarios import Env

pytestmark = [pytest.mark.faults]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("case", sorted(CASES))
async def test_a_poison_input_is_refused_without_a_failover_storm(env: Env, case: str) -> None:
    outcome = await poison(env, 0, case)
    scenarios.assert_clean(outcome, env)
