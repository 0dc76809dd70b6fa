"""The pure parts of quota config handling: values, entity paths, notifications, updates."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reassignd.errors import InvalidRequest
from reassignd.quotas.config_changes import ConfigChanges, change_number
from reassignd.quotas.config_store import (
    QuotaEntry,
    apply_quota_updates,
    entity_znode,
    format_rate,
    parse_entity_path,
    parse_rate,
    quota_values,
)
from reassignd.quotas.entities import DEFAULT, ConfigKey
from reassignd.zk import paths

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    ("text", "value"),
    [("10.0", 10.0), ("2", 2.0), (" 1.5 ", 1.5), ("1e3", 1000.0), ("1.0E-5", 1e-5), (".5", 0.5), ("0", 0.0)],
)
def test_parse_rate_accepts_decimal_strings(text: str, value: float) -> None:
    assert parse_rate(text) == value


@pytest.mark.parametrize("text", ["", "ten", "NaN", "Infinity", "inf", "1_000", "-1", "1e999", "0x10", "1,5"])
def test_parse_rate_refuses_the_rest(text: str) -> None:
    with pytest.raises(ValueError, match=r"decimal|finite"):
        parse_rate(text)


@given(st.floats(min_value=0, max_value=1e300, allow_nan=False))
def test_format_then_parse_round_trips(value: float) -> None:
    assert parse_rate(format_rate(value)) == value


def test_format_rate_writes_a_double_as_kafka_does() -> None:
    assert format_rate(2) == "2.0"
    assert format_rate(0.5) == "0.5"


def test_parse_entity_path() -> None:
    assert parse_entity_path("users/alice") == ("alice", None)
    assert parse_entity_path("users/alice/clients/app") == ("alice", "app")
    assert parse_entity_path("clients/app") == (None, "app")
    assert parse_entity_path("users/<default>/clients/<default>") == (DEFAULT, DEFAULT)
    assert parse_entity_path("users/CN%3Da%20b%2A") == ("CN=a b*", None)
    for other in (
        "topics/orders",
        "brokers/1",
        "users",
        "users/",
        "users/a/clients/",
        "users/a/x/b",
        "ips/1.2.3.4",
    ):
        assert parse_entity_path(other) is None


@given(
    user=st.one_of(st.none(), st.just(DEFAULT), st.text(min_size=1, max_size=20)),
    client_id=st.one_of(st.none(), st.just(DEFAULT), st.text(min_size=1, max_size=20)),
)
def test_entity_paths_round_trip_through_znode_names(user: str | None, client_id: str | None) -> None:
    if user is None and client_id is None:
        return
    znode = paths.config_entity(user, client_id)
    valid = all(n is None or paths.is_znode_name(paths.encode_entity_name(n)) for n in (user, client_id))
    # "." and ".." cannot be znode names (ZooKeeper answers BADARGUMENTS): no entity is read there
    assert parse_entity_path(paths.entity_path(znode)) == ((user, client_id) if valid else None)


def test_names_zookeeper_refuses_are_refused_before_any_write() -> None:
    for user, client_id in ((".", None), ("..", None), (None, "."), ("alice", ".."), (".", "app")):
        with pytest.raises(InvalidRequest, match="znode name"):
            entity_znode(user, client_id)
    assert parse_entity_path("users/..") is None
    assert parse_entity_path("users/a/clients/.") is None
    assert entity_znode("...", None) == "/config/users/..."  # three dots are a name


def test_entity_znode_validates_like_alter_client_quotas() -> None:
    assert entity_znode("CN=a b*", None) == "/config/users/CN%3Da%20b%2A"
    assert entity_znode(DEFAULT, "app") == "/config/users/<default>/clients/app"
    assert entity_znode(None, DEFAULT) == "/config/clients/<default>"
    for user, client_id in ((None, None), ("", None), ("alice", ""), (None, "")):
        with pytest.raises(InvalidRequest) as info:
            entity_znode(user, client_id)
        assert info.value.error_code == 42


def test_quota_values_report_bad_values_and_keep_the_rest() -> None:
    reports: list[tuple[str, str, str]] = []

    def report(path: str, reason: str, kind: str) -> None:
        reports.append((path, reason, kind))

    config = {"controller_mutation_rate": "ten", "producer_byte_rate": "1024", "other": "x"}
    keys = ("controller_mutation_rate", "producer_byte_rate")
    assert quota_values("/config/users/a", config, report, keys) == {"producer_byte_rate": 1024.0}
    assert reports == [
        ("/config/users/a", "controller_mutation_rate: not a decimal number: 'ten'", "quota_config")
    ]


def test_apply_quota_updates_sets_and_removes() -> None:
    quotas: dict[ConfigKey, float] = {("alice", None): 1.0, (None, "app"): 2.0}
    updates: dict[ConfigKey, float | None] = {("alice", None): None, ("bob", "x"): 3.0, ("gone", None): None}
    assert apply_quota_updates(quotas, updates) == {(None, "app"): 2.0, ("bob", "x"): 3.0}
    assert quotas == {("alice", None): 1.0, (None, "app"): 2.0}  # not modified


def test_change_numbers_and_quota_entities_of_notifications() -> None:
    assert change_number("config_change_0000000012") == 12
    assert change_number("config_change_") is None
    assert change_number("config_change_12a") is None
    assert change_number("other_0000000001") is None
    changes = ConfigChanges(("topics/orders", "users/alice/clients/app", "clients/<default>"), last_seq=3)
    assert changes.quota_entities == (("alice", "app"), (None, DEFAULT))


def test_quota_entry_json() -> None:
    entry = QuotaEntry("alice", None, {"controller_mutation_rate": 2.0})
    assert entry.to_json() == {"entity": {"user": "alice"}, "values": {"controller_mutation_rate": 2.0}}
    pair = QuotaEntry(DEFAULT, "app", {"controller_mutation_rate": 1.0})
    assert pair.entity_json() == {"user": "<default>", "client_id": "app"}
