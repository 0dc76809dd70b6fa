"""The reload budget and the quarantine (controller/runtime/reload_budget.py), the bounded memory
of reported problems, and the clear-text warnings of a listener bound beyond the loopback."""

from __future__ import annotations

import time

from reassignd.controller.instance import shared as shared_module
from reassignd.controller.instance.event_queue import ControllerEventQueue
from reassignd.controller.instance.metrics import ControllerMetrics
from reassignd.controller.instance.shared import Shared
from reassignd.controller.runtime.reload_budget import (
    RELOAD_WINDOW_S,
    RELOADS_PER_WINDOW,
    TICK_HOLD_MAX_S,
    Quarantine,
    ReloadBudget,
)
from reassignd.controller.settings import ControllerSettings
from reassignd.service import clear_text_warnings
from reassignd.zk.client import ZkClient
from reassignd.zk.values import ZkSettings


def test_at_most_a_few_reloads_a_minute() -> None:
    budget = ReloadBudget(0.0)
    taken = [t for t in range(600) if budget.take(t * 0.1)]  # a refused event every 100 ms for 60 s
    assert len(taken) <= 2 * RELOADS_PER_WINDOW  # the burst, then one per window / capacity
    assert taken[:RELOADS_PER_WINDOW] == list(range(RELOADS_PER_WINDOW))
    over = ReloadBudget(0.0)
    for _ in range(RELOADS_PER_WINDOW):
        assert over.take(0.0)
    assert not over.take(0.0)
    due = over.next_at(0.0)
    assert due == RELOAD_WINDOW_S / RELOADS_PER_WINDOW
    assert not over.take(due - 0.01)
    assert over.take(due)


def test_an_input_that_fails_again_after_its_reload_is_quarantined() -> None:
    q = Quarantine()
    key = ("ApiPartitionReassignment", "abc")
    assert not q.failed(key, "NOAUTH")
    assert q.holds(key) is None
    assert q.failed(key, "NOAUTH")
    assert q.holds(key) == "NOAUTH"
    assert not q.failed(("ApiPartitionReassignment", "other"), "NOAUTH")


def test_a_tick_failing_on_a_quarantined_input_is_held_back_longer_each_time() -> None:
    q = Quarantine()
    holds = [q.hold_tick("ExecutorTick", 0.0) for _ in range(8)]
    assert holds == sorted(holds) and holds[0] > 0 and holds[-1] == TICK_HOLD_MAX_S
    assert q.tick_held_until("ExecutorTick") == TICK_HOLD_MAX_S
    assert q.tick_held_until("SelfHealingTick") is None


def test_the_memory_of_reported_problems_is_bounded(monkeypatch: object) -> None:
    settings = ControllerSettings("127.0.0.1:1")
    zk = ZkClient(ZkSettings("127.0.0.1:1"))  # never started: reports do not touch ZooKeeper
    queue: ControllerEventQueue[object] = ControllerEventQueue(time.monotonic)
    shared = Shared(settings, zk, ControllerMetrics(), time.monotonic, queue, None)  # type: ignore[arg-type]
    bound = shared_module.MAX_REPORTED
    for i in range(bound + 500):
        shared.refuse(f"/brokers/topics/t{i}", "NOAUTH", "partition_state")
    assert len(shared._reported) == bound
    assert len(shared.problems) == shared_module.MAX_PROBLEMS


def test_a_listener_beyond_the_loopback_without_tls_is_warned_about() -> None:
    local = ControllerSettings("zk", http_host="127.0.0.1", kafka_listener_host="::1")
    assert clear_text_warnings(local) == []
    public = ControllerSettings("zk", http_host="0.0.0.0", kafka_listener_host="10.1.2.3")
    warnings = clear_text_warnings(public)
    assert len(warnings) == 2 and all("in clear" in w for w in warnings)
    tls = ControllerSettings(
        "zk",
        http_host="0.0.0.0",
        tls_cert="c.pem",
        tls_key="k.pem",
        kafka_listener_host="10.1.2.3",
        kafka_tls_cert="c.pem",
        kafka_tls_key="k.pem",
    )
    assert clear_text_warnings(tls) == []
