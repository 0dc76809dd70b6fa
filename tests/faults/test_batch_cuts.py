"""The batch executor's writes under faults: the controller's ZooKeeper connection cut right
after a write of the batch journal (at submission and at a later state change), of a throttle, of
the exact origins; and its session expiring mid-batch. The batch completes once, its throttles
come back exactly as they were, no origin is left behind."""

from __future__ import annotations

import pytest

from tests.faults import scenarios
from tests.faults.batch_scenarios import (
    BATCH_POINTS,
    SPLIT_POINTS,
    api_cancel_cut,
    journal_split,
    proxy_cut_batch,
)
from tests.faults.scenarios import Env

pytestmark = pytest.mark.faults


@pytest.mark.timeout(180)
@pytest.mark.parametrize("point", BATCH_POINTS)
async def test_a_batch_survives_a_cut_after_an_executor_write(env: Env, point: str) -> None:
    outcome = await proxy_cut_batch(env, 7, point)
    scenarios.assert_clean(outcome, env)


@pytest.mark.slow
@pytest.mark.timeout(420)
@pytest.mark.parametrize("point", SPLIT_POINTS)
async def test_a_journal_of_several_multis_is_atomic_when_cut_after_the_first(env: Env, point: str) -> None:
    """A 4,000-partition batch (its journal several multis long), the connection cut right after
    the first multi of a stop or of the submission: the stop is not half done (every move stopped
    once the client's retry is answered), the submission retried is accepted (another body under
    the id: 10004), the throttles are as the batch's state says, the epoch moves at most once."""
    outcome = await journal_split(env, 3, point)
    scenarios.assert_clean(outcome, env)


@pytest.mark.timeout(180)
async def test_an_api_cancel_of_a_batch_move_cut_after_its_topic_write_is_not_started_again(env: Env) -> None:
    outcome = await api_cancel_cut(env, 5)
    scenarios.assert_clean(outcome, env)
