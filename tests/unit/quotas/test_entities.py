"""Kafka's client-quota precedence, one test per level, and which requests share a bucket."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reassignd.quotas.entities import (
    DEFAULT,
    ConfigKey,
    QuotaIdentity,
    Resolution,
    candidates,
    describe_key,
    entity_quota,
    resolve,
)
from reassignd.zk.paths import spell_entity_name

pytestmark = pytest.mark.timeout(60)

# Every level configured, each with its own rate (the level number), for alice / app.
ALL_LEVELS: dict[ConfigKey, float] = {
    ("alice", "app"): 1.0,
    ("alice", DEFAULT): 2.0,
    ("alice", None): 3.0,
    (DEFAULT, "app"): 4.0,
    (DEFAULT, DEFAULT): 5.0,
    (DEFAULT, None): 6.0,
    (None, "app"): 7.0,
    (None, DEFAULT): 8.0,
}


def without_levels_above(level: int) -> dict[ConfigKey, float]:
    return {key: rate for key, rate in ALL_LEVELS.items() if rate >= level}


def test_level_1_user_and_client_id() -> None:
    assert resolve(ALL_LEVELS, "alice", "app") == Resolution(
        1, ("alice", "app"), QuotaIdentity("alice", "app"), 1.0
    )


def test_level_2_user_with_default_client_id() -> None:
    found = resolve(without_levels_above(2), "alice", "app")
    assert found == Resolution(2, ("alice", DEFAULT), QuotaIdentity("alice", "app"), 2.0)


def test_level_3_user() -> None:
    found = resolve(without_levels_above(3), "alice", "app")
    assert found == Resolution(3, ("alice", None), QuotaIdentity("alice", None), 3.0)


def test_level_4_default_user_with_client_id() -> None:
    found = resolve(without_levels_above(4), "alice", "app")
    assert found == Resolution(4, (DEFAULT, "app"), QuotaIdentity("alice", "app"), 4.0)


def test_level_5_default_user_with_default_client_id() -> None:
    found = resolve(without_levels_above(5), "alice", "app")
    assert found == Resolution(5, (DEFAULT, DEFAULT), QuotaIdentity("alice", "app"), 5.0)


def test_level_6_default_user() -> None:
    found = resolve(without_levels_above(6), "alice", "app")
    assert found == Resolution(6, (DEFAULT, None), QuotaIdentity("alice", None), 6.0)


def test_level_7_client_id() -> None:
    found = resolve(without_levels_above(7), "alice", "app")
    assert found == Resolution(7, (None, "app"), QuotaIdentity(None, "app"), 7.0)


def test_level_8_default_client_id() -> None:
    found = resolve(without_levels_above(8), "alice", "app")
    assert found == Resolution(8, (None, DEFAULT), QuotaIdentity(None, "app"), 8.0)


def test_level_9_unlimited() -> None:
    assert resolve({}, "alice", "app") is None
    others: dict[ConfigKey, float] = {("bob", None): 1.0, ("bob", "app"): 1.0, (None, "other"): 1.0}
    assert resolve(others, "alice", "app") is None


def test_another_users_and_client_ids_quotas_do_not_apply() -> None:
    quotas: dict[ConfigKey, float] = {("bob", "app"): 1.0, ("alice", "web"): 2.0, (DEFAULT, None): 6.0}
    assert resolve(quotas, "alice", "app") == Resolution(
        6, (DEFAULT, None), QuotaIdentity("alice", None), 6.0
    )


def test_a_users_client_ids_share_the_user_quota_but_defaults_are_per_entity() -> None:
    user_only: dict[ConfigKey, float] = {("alice", None): 3.0}
    a, b = resolve(user_only, "alice", "app"), resolve(user_only, "alice", "cli")
    assert a is not None and b is not None and a.entity == b.entity == QuotaIdentity("alice", None)
    default_user: dict[ConfigKey, float] = {(DEFAULT, None): 6.0}
    alice, bob = resolve(default_user, "alice", "app"), resolve(default_user, "bob", "app")
    assert alice is not None and bob is not None
    assert alice.config_key == bob.config_key == (DEFAULT, None)
    assert (alice.entity, bob.entity) == (QuotaIdentity("alice", None), QuotaIdentity("bob", None))
    client_only: dict[ConfigKey, float] = {(None, "app"): 7.0}
    x, y = resolve(client_only, "alice", "app"), resolve(client_only, "bob", "app")
    assert x is not None and y is not None and x.entity == y.entity == QuotaIdentity(None, "app")


def test_entity_quota_is_kafkas_quota_limit_of_metric_tags() -> None:
    assert entity_quota(ALL_LEVELS, QuotaIdentity("alice", "app")) == Resolution(
        1, ("alice", "app"), QuotaIdentity("alice", "app"), 1.0
    )
    pair_levels = {k: v for k, v in ALL_LEVELS.items() if v in (5.0, 3.0, 6.0)}
    assert entity_quota(pair_levels, QuotaIdentity("alice", "app")) == Resolution(
        5, (DEFAULT, DEFAULT), QuotaIdentity("alice", "app"), 5.0
    )
    user_levels: dict[ConfigKey, float] = {(DEFAULT, None): 6.0}
    assert entity_quota(user_levels, QuotaIdentity("alice", None)) is not None
    assert entity_quota(user_levels, QuotaIdentity("alice", "app")) is None  # no pair level left
    assert entity_quota(ALL_LEVELS, QuotaIdentity(None, "web")) == Resolution(
        8, (None, DEFAULT), QuotaIdentity(None, "web"), 8.0
    )
    assert entity_quota(ALL_LEVELS, QuotaIdentity(None, None)) is None


def test_labels_and_descriptions() -> None:
    assert QuotaIdentity("alice", None).labels == {"user": "alice", "client_id": ""}
    assert QuotaIdentity(None, "app").labels == {"user": "", "client_id": "app"}
    assert describe_key(("alice", DEFAULT)) == "user=alice, client-id=<default>"
    assert describe_key((None, "app")) == "client-id=app"


_names = st.sampled_from(["alice", "bob", "app", "web", ""])
_keys = st.tuples(
    st.sampled_from(["alice", "bob", DEFAULT, None]), st.sampled_from(["app", "web", DEFAULT, None])
)


@given(
    quotas=st.dictionaries(_keys, st.floats(0, 100), max_size=10),
    user=_names,
    client_id=_names,
)
def test_resolution_is_the_first_configured_candidate(
    quotas: dict[ConfigKey, float], user: str, client_id: str
) -> None:
    quotas.pop((None, None), None)
    found = resolve(quotas, user, client_id)
    configured = [(key, entity) for key, entity in candidates(user, client_id) if key in quotas]
    if not configured:
        assert found is None
        return
    assert found is not None
    assert (found.config_key, found.entity) == configured[0]
    assert found.rate_per_s == quotas[found.config_key]
    again = entity_quota(quotas, found.entity)  # a bucket re-resolves to its own quota
    assert again is not None and again.rate_per_s == found.rate_per_s


def test_a_client_id_literally_named_default_is_not_the_default() -> None:
    # Kafka sanitizes a request's client-id "<default>" to %3Cdefault%3E: its own entity (level 7),
    # spelled "<<default>" in reassignd's keys; the default (level 8) applies only without it
    literal = spell_entity_name("<default>")
    both: dict[ConfigKey, float] = {(None, literal): 7.0, (None, DEFAULT): 8.0}
    assert resolve(both, "alice", "<default>") == Resolution(
        7, (None, literal), QuotaIdentity(None, "<default>"), 7.0
    )
    assert resolve(both, "alice", "app") == Resolution(8, (None, DEFAULT), QuotaIdentity(None, "app"), 8.0)
    assert resolve({(None, DEFAULT): 8.0}, "alice", "<default>") == Resolution(
        8, (None, DEFAULT), QuotaIdentity(None, "<default>"), 8.0
    )
    assert entity_quota(both, QuotaIdentity(None, "<default>")) == Resolution(
        7, (None, literal), QuotaIdentity(None, "<default>"), 7.0
    )
