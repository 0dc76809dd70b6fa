"""When the auto leader rebalance checks run: 5 s into a term (or one interval, when shorter), then
every interval, never while standby or with the rebalance off; the due time is the injected
clock's, the loop's timer only wakes the controller with an AutoLeaderRebalanceTick."""

from __future__ import annotations

import asyncio

from reassignd.controller.instance.event_queue import ControllerEventQueue
from reassignd.controller.instance.events import AutoLeaderRebalanceTick, ControllerEvent
from reassignd.controller.leadership.rebalance_timer import FIRST_CHECK_S, RebalanceTimer
from reassignd.controller.settings import ControllerSettings


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def timer(**settings: object) -> tuple[RebalanceTimer, FakeClock, ControllerEventQueue[ControllerEvent]]:
    clock = FakeClock()
    queue: ControllerEventQueue[ControllerEvent] = ControllerEventQueue(clock)
    s = ControllerSettings(zk_connect="127.0.0.1:2181", **settings)  # type: ignore[arg-type]
    return RebalanceTimer(s, clock, queue), clock, queue


def test_the_first_check_comes_five_seconds_into_a_term_then_every_interval() -> None:
    t, clock, _ = timer(leader_imbalance_check_interval_s=300.0)
    assert t.due_s is None and not t.take()  # standby: nothing planned
    t.start_term()
    assert t.due_s == 1000.0 + FIRST_CHECK_S
    clock.now += 4.9
    assert not t.take()  # early (a tick of an earlier term, say)
    clock.now += 0.1
    assert t.take()
    assert t.due_s == clock.now + 300.0
    assert not t.take()  # once per due time
    clock.now += 300.0
    assert t.take()


def test_an_interval_shorter_than_five_seconds_is_also_the_first_delay() -> None:
    t, _, _ = timer(leader_imbalance_check_interval_s=2.0)
    t.start_term()
    assert t.due_s == 1002.0


def test_a_reload_keeps_the_planned_check_and_a_resignation_drops_it() -> None:
    t, clock, _ = timer()
    t.start_term()
    due = t.due_s
    clock.now += 3.0
    t.start_term()  # the same term reloaded after a refused event
    assert t.due_s == due
    t.stop()
    assert t.due_s is None and not t.take()
    t.start_term()  # a new term: five seconds from now
    assert t.due_s == clock.now + FIRST_CHECK_S


def test_nothing_is_planned_with_the_rebalance_off() -> None:
    t, clock, _ = timer(auto_leader_rebalance_enable=False)
    t.start_term()
    clock.now += 10_000.0
    assert t.due_s is None and not t.take()


async def test_the_loop_timer_wakes_the_controller_with_a_tick() -> None:
    t, clock, queue = timer(leader_imbalance_check_interval_s=0.05)
    t.start_term()
    t.schedule()
    t.schedule()  # one wake-up per planned check
    clock.now += 0.05
    event, _ = await asyncio.wait_for(queue.get(), 5.0)
    assert event == AutoLeaderRebalanceTick()
    assert len(queue) == 0
    t.stop()
    t.schedule()  # nothing planned after the term ended
    await asyncio.sleep(0.1)
    assert len(queue) == 0
