"""Adversarial inputs (tests/faults/adversarial.py): each sent repeatedly through its real door
while moves are in flight; answered with its error, nothing of it written, the controller kept
(the epoch moved at most once), every accepted move completed, memory bounded."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.adversarial import CASES, adversarial
from tests.faults.scenarios import Env

pytestmark = [pytest.mark.faults]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("case", sorted(CASES))
async def test_an_adversarial_input_is_answered_without_moving_the_controller(env: Env, case: str) -> None:
    outcome = await adversarial(env, 0, case)
    scenarios.assert_clean(outcome, env)
