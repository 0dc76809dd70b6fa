"""Which broker gets which port (--kafka-broker-ports): stable while registered, the same port
back after a re-registration, a cap, the ephemeral range; the option's parsing and checks."""

from __future__ import annotations

import dataclasses

import pytest

from reassignd.controller.settings import ControllerSettings
from reassignd.kafka_listener.broker_ports import EPHEMERAL, assign, capacity, remember
from reassignd.kafka_listener.config import kafka_listener_problem
from reassignd.options import port_range

RANGE = (9100, 9104)


def test_brokers_take_the_lowest_ports_in_order_of_id() -> None:
    a = assign([3, 1, 2], {}, {}, RANGE, 10)
    assert a.ports == {1: 9100, 2: 9101, 3: 9102}
    assert a.over_cap == ()


def test_a_broker_keeps_its_port_while_others_come_and_go() -> None:
    a = assign([1, 2, 3], {}, {}, RANGE, 10)
    b = assign([2, 3, 4], a.ports, remember({}, a.ports), RANGE, 10)
    assert b.ports[2] == 9101 and b.ports[3] == 9102
    assert b.ports[4] == 9103  # not 9100: broker 1 may come back to it
    assert 1 not in b.ports


def test_a_broker_that_registers_again_gets_its_port_back() -> None:
    first = assign([1, 2], {}, {}, RANGE, 10)
    remembered = remember({}, first.ports)
    without_1 = assign([2], first.ports, remembered, RANGE, 10)
    remembered = remember(remembered, without_1.ports)
    again = assign([1, 2], without_1.ports, remembered, RANGE, 10)
    assert again.ports == first.ports


def test_a_full_range_reuses_the_ports_of_brokers_gone() -> None:
    a = assign([1, 2, 3, 4, 5], {}, {}, RANGE, 10)
    remembered = remember({}, a.ports)
    b = assign([2, 3, 4, 5, 6], {b: p for b, p in a.ports.items() if b != 1}, remembered, RANGE, 10)
    assert b.ports[6] == 9100
    assert remember(remembered, b.ports) == b.ports  # one broker per port: bounded


def test_brokers_past_the_cap_or_the_range_have_no_port() -> None:
    capped = assign(range(1, 8), {}, {}, RANGE, 3)
    assert sorted(capped.ports) == [1, 2, 3]
    assert capped.over_cap == (4, 5, 6, 7)
    by_range = assign(range(1, 8), {}, {}, RANGE, 100)
    assert sorted(by_range.ports) == [1, 2, 3, 4, 5]
    assert by_range.over_cap == (6, 7)
    assert capacity(RANGE, 100) == 5 and capacity(RANGE, 2) == 2 and capacity(EPHEMERAL, 7) == 7


def test_a_freed_slot_goes_to_a_broker_past_the_cap() -> None:
    capped = assign([1, 2, 3], {}, {}, RANGE, 2)
    assert capped.over_cap == (3,)
    after = assign([2, 3], {2: capped.ports[2]}, remember({}, capped.ports), RANGE, 2)
    assert after.ports == {2: 9101, 3: 9102}  # 9100 is kept for broker 1 while others are free
    assert after.over_cap == ()


def test_ports_that_failed_to_bind_are_not_handed_out() -> None:
    a = assign([1, 2], {}, {}, RANGE, 10, unusable={9100, 9102})
    assert a.ports == {1: 9101, 2: 9103}


def test_ephemeral_ports_are_bound_by_the_system_up_to_the_cap() -> None:
    a = assign([5, 1, 9], {}, {}, EPHEMERAL, 2)
    assert a.ports == {1: 0, 5: 0}
    assert a.over_cap == (9,)
    bound = {1: 40001, 5: 40002}
    b = assign([1, 9], bound, remember({}, bound), EPHEMERAL, 2)
    assert b.ports == {1: 40001, 9: 0}


@pytest.mark.parametrize(
    ("given", "parsed"),
    [
        ("9100-9199", (9100, 9199)),
        ("0", (0, 0)),
        (0, (0, 0)),
        ([9100, 9100], (9100, 9100)),
        (" 1 - 2 ", (1, 2)),
    ],
)
def test_the_option_parses_a_range_or_zero(given: object, parsed: tuple[int, int]) -> None:
    assert port_range(given) == parsed


@pytest.mark.parametrize("given", ["9199-9100", "0-10", "9100", "a-b", "9100-70000", True, "", 5])
def test_the_option_refuses_anything_else(given: object) -> None:
    with pytest.raises(ValueError):
        port_range(given)


def test_a_range_holding_the_bootstrap_port_is_refused() -> None:
    base = ControllerSettings(zk_connect="z:2181", kafka_listener_host="127.0.0.1", kafka_listener_port=9092)
    ok = dataclasses.replace(base, kafka_broker_ports=(9093, 9192))
    assert kafka_listener_problem(ok) is None
    bad = dataclasses.replace(base, kafka_broker_ports=(9000, 9192))
    assert "holds the --kafka-listener port 9092" in str(kafka_listener_problem(bad))
    alone = ControllerSettings(zk_connect="z:2181", kafka_broker_ports=(0, 0))
    assert kafka_listener_problem(alone) == "--kafka-broker-ports needs --kafka-listener"
