"""Admission at the door (``controller/model/admission.py``) and the config types it checks values
against (``controller/model/config_types.py``): pure functions, each refusal with Kafka's code."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reassignd.controller.model.admin_requests import (
    ConfigChange,
    ConfigOp,
    ConfigResource,
    ResourceAlteration,
    ResourceType,
)
from reassignd.controller.model.admission import (
    DUPLICATE_TOPIC,
    alteration_problem,
    alterations_problems,
    new_topics_errors,
    quota_entry_error,
    too_many_partitions,
    topic_configs_error,
)
from reassignd.controller.model.config_rules import (
    CONFIG_ZNODE_BUDGET_BYTES,
    TOPIC_CONFIG_NAMES,
    plan_alteration,
)
from reassignd.controller.model.config_types import TOPIC_CONFIG_TYPES, ConfigType, Kind, typed_value_problem
from reassignd.controller.model.requests import QuotaChange, TopicToCreate
from reassignd.int_limits import INT32_MAX, INT64_MAX
from reassignd.quotas.config_store import ENTITY_PATH_MAX_BYTES

BIG = "x" * (CONFIG_ZNODE_BUDGET_BYTES + 1)


def _set(resource_type: ResourceType, name: str, key: str, value: str | None) -> ResourceAlteration:
    return ResourceAlteration(ConfigResource(resource_type, name), (ConfigChange(key, ConfigOp.SET, value),))


# --- IncrementalAlterConfigs ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["abc", "-1", "1.0", "١", " 1"])
def test_a_broker_resource_must_be_an_id(name: str) -> None:
    problem = alteration_problem(_set(ResourceType.BROKER, name, "leader.replication.throttled.rate", "10"))
    assert problem is not None and problem[0] == 42 and "Broker id must be an integer" in problem[1]


@pytest.mark.parametrize("name", ["", "1", "1001"])
def test_a_broker_id_or_the_default_is_admitted(name: str) -> None:
    assert (
        alteration_problem(_set(ResourceType.BROKER, name, "leader.replication.throttled.rate", "10")) is None
    )


def test_alter_configs_refusals() -> None:
    assert alteration_problem(_set(ResourceType.TOPIC, "t", "no.such", "1")) == (
        40,
        "Unknown topic config name: no.such",
    )
    assert alteration_problem(_set(ResourceType.TOPIC, "t", "segment.bytes", "13")) == (
        40,
        "Invalid value 13 for configuration segment.bytes: Value must be at least 14",
    )
    assert alteration_problem(_set(ResourceType.TOPIC, "bad/name", "retention.ms", "1")) is not None
    too_big = alteration_problem(_set(ResourceType.BROKER, "1", "reassignd.sim.x", BIG))
    assert too_big is not None and too_big[0] == 40 and str(CONFIG_ZNODE_BUDGET_BYTES) in too_big[1]


def test_the_merge_with_the_stored_config_is_sized_too() -> None:
    """Each value fits, the merged config does not: refused before the write (the safety net)."""
    half = "y" * (CONFIG_ZNODE_BUDGET_BYTES // 2 + 10)
    alteration = _set(ResourceType.BROKER, "1", "reassignd.sim.b", half)
    assert alteration_problem(alteration) is None
    planned = plan_alteration(alteration, {"reassignd.sim.a": half})
    assert isinstance(planned, tuple) and planned[0] == 40


def test_a_resource_named_twice_is_refused_in_every_entry_and_the_others_are_admitted() -> None:
    """Kafka's ConfigAdminManager: 42 on each entry of a duplicated resource, whatever their
    changes (a broker id is a number: ``01`` is broker 1); a topic and a broker of one name are
    two resources; the other entries are checked on their own."""
    duplicate = (42, "Each resource must appear at most once.")
    request = [
        _set(ResourceType.TOPIC, "t", "retention.ms", "1000"),
        _set(ResourceType.BROKER, "1", "leader.replication.throttled.rate", "10"),
        _set(ResourceType.TOPIC, "u", "retention.ms", "1000"),
        _set(ResourceType.TOPIC, "t", "segment.ms", "2000"),
        _set(ResourceType.BROKER, "01", "follower.replication.throttled.rate", "10"),
        _set(ResourceType.TOPIC, "1", "retention.ms", "1000"),
        _set(ResourceType.TOPIC, "v", "no.such", "1"),
    ]
    assert alterations_problems(request) == [
        duplicate,
        duplicate,
        None,
        duplicate,
        duplicate,
        None,
        (40, "Unknown topic config name: no.such"),
    ]
    # three copies, even identical ones, are each refused
    same = _set(ResourceType.BROKER, "", "leader.replication.throttled.rate", "10")
    assert alterations_problems([same, same, same]) == [duplicate] * 3
    assert alterations_problems([]) == []


def test_a_config_key_named_twice_in_one_resource_is_refused() -> None:
    twice = ResourceAlteration(
        ConfigResource(ResourceType.TOPIC, "t"),
        (
            ConfigChange("retention.ms", ConfigOp.SET, "1"),
            ConfigChange("segment.ms", ConfigOp.SET, "1"),
            ConfigChange("retention.ms", ConfigOp.DELETE, None),
        ),
    )
    assert alterations_problems([twice, _set(ResourceType.TOPIC, "u", "retention.ms", "1")]) == [
        (42, "Error due to duplicate config keys : retention.ms"),
        None,
    ]


# --- CreateTopics ----------------------------------------------------------------------------------


def test_create_topics_each_topic_on_its_own() -> None:
    errors = new_topics_errors(
        [
            TopicToCreate("ok", configs={"retention.ms": "1000", "cleanup.policy": "compact,delete"}),
            TopicToCreate("big", configs={"retention.ms": BIG}),
            TopicToCreate("key", configs={"retension.ms": "1"}),
            TopicToCreate("null", configs={"retention.ms": None}),
            TopicToCreate("bad name"),
            TopicToCreate("twice"),
            TopicToCreate("twice"),
        ]
    )
    assert [None if e is None else e.error_code for e in errors] == [None, 40, 40, 42, 17, 42, 42]
    assert errors[5] is not None and errors[5].message == DUPLICATE_TOPIC


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("cleanup.policy", "compact,remove", "Invalid value remove for configuration cleanup.policy: String must be one of: compact, delete"),
        ("compression.type", "brotli", "Invalid value brotli for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
        ("min.cleanable.dirty.ratio", "1.5", "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
        ("preallocate", "yes", "Invalid value yes for configuration preallocate: Expected value to be either true or false"),
        ("max.message.bytes", str(INT32_MAX + 1), f"Invalid value {INT32_MAX + 1} for configuration max.message.bytes: Not a number of type INT"),
        ("retention.ms", "-2", "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
    ],
)  # fmt: skip
def test_topic_config_values_are_typed(key: str, value: str, message: str) -> None:
    error = topic_configs_error({key: value})
    assert error is not None and (error.error_code, error.message) == (40, message)


def test_valid_topic_configs_are_admitted() -> None:
    configs = {
        "retention.ms": "-1",
        "retention.bytes": " -5 ",
        "segment.bytes": "14",
        "min.cleanable.dirty.ratio": "0.5",
        "unclean.leader.election.enable": "TRUE",
        "message.timestamp.type": "LogAppendTime",
        "leader.replication.throttled.replicas": "0:1,1:2",
        "message.format.version": "3.0-IV1",
        "cleanup.policy": "",
    }
    assert topic_configs_error(configs) is None


def test_every_topic_config_name_has_a_type() -> None:
    assert frozenset(TOPIC_CONFIG_TYPES) == TOPIC_CONFIG_NAMES


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_a_long_is_admitted_exactly_in_its_range(number: int) -> None:
    problem = typed_value_problem(ConfigType(Kind.LONG), "retention.bytes", str(number))
    assert (problem is None) == (-(2**63) <= number <= INT64_MAX)


@given(st.integers(min_value=-(2**40), max_value=2**40), st.sampled_from(["", " ", "\t", "  "]))
def test_an_int_is_admitted_exactly_in_its_bounds(number: int, blank: str) -> None:
    problem = typed_value_problem(
        ConfigType(Kind.INT, at_least=0), "max.message.bytes", f"{blank}{number}{blank}"
    )
    assert (problem is None) == (0 <= number <= INT32_MAX)


@given(st.text(min_size=1, max_size=20).filter(lambda t: any(c.isalpha() for c in t)))
def test_a_number_with_a_letter_is_refused(text: str) -> None:
    for kind in (Kind.INT, Kind.LONG):
        assert typed_value_problem(ConfigType(kind), "n", text) is not None


@given(st.dictionaries(st.sampled_from(sorted(TOPIC_CONFIG_NAMES)), st.text(max_size=30), max_size=6))
def test_topic_configs_error_never_raises(configs: dict[str, str]) -> None:
    error = topic_configs_error(configs)
    assert error is None or error.error_code == 40


# --- quotas and counts -----------------------------------------------------------------------------


def test_an_entity_path_over_the_bound_is_refused() -> None:
    assert quota_entry_error(QuotaChange("u" * 100, None, 1.0)) is None
    long_user = quota_entry_error(QuotaChange("u" * ENTITY_PATH_MAX_BYTES, None, 1.0))
    assert long_user is not None and long_user.error_code == 42
    # the bound is on the encoded path: 1,000 characters that URL-encode to 9 bytes each
    encoded = quota_entry_error(QuotaChange(None, "é" * 1000, 1.0))
    assert encoded is not None and encoded.error_code == 42
    assert quota_entry_error(QuotaChange("alice", None, float("nan"))) is not None


@given(st.integers(min_value=0, max_value=100), st.integers(min_value=1, max_value=100))
def test_too_many_partitions(count: int, limit: int) -> None:
    refused = too_many_partitions(count, limit, "The reassignment")
    assert (refused is None) == (count <= limit)
    if refused is not None:
        assert refused.error_code == 42 and str(limit) in (refused.message or "")
