"""Topic configs as Kafka resolves a LogConfig: the topic's value, else the broker default,
else Kafka's static default; values that do not parse are unusable."""

from __future__ import annotations

import pytest

from reassignd.controller.model.config_rules import parse_bool
from reassignd.controller.reads.topic_configs import (
    MIN_INSYNC_REPLICAS,
    UNCLEAN_LEADER_ELECTION_ENABLE,
    TopicConfigs,
    config_problems,
    topics_of_entities,
)

UNCLEAN = UNCLEAN_LEADER_ELECTION_ENABLE


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("true", True),
        ("TRUE", True),
        (" True ", True),
        ("false", False),
        ("False", False),
        ("yes", None),
        ("", None),
    ],
)
def test_booleans_as_kafkas_config_def(value: str, parsed: bool | None) -> None:
    assert parse_bool(value) is parsed


@pytest.mark.parametrize(
    ("topic", "default", "allowed"),
    [
        (None, None, False),  # Kafka's static default
        ("true", None, True),
        (None, "true", True),  # the dynamic cluster-wide default
        ("false", "true", False),  # the topic's own value wins
        ("true", "false", True),
        ("maybe", "true", False),  # unusable: no unclean election (Kafka fails the LogConfig)
        (None, "maybe", False),
    ],
)
def test_unclean_leader_election_resolution(topic: str | None, default: str | None, allowed: bool) -> None:
    configs = TopicConfigs(
        default={} if default is None else {UNCLEAN: default},
        topics={"t": {} if topic is None else {UNCLEAN: topic}},
    )
    assert configs.unclean_leader_election("t") is allowed


def test_a_topic_not_read_has_the_default() -> None:
    assert TopicConfigs(default={UNCLEAN: "true"}).unclean_leader_election("other")
    assert not TopicConfigs().unclean_leader_election("other")


def test_min_insync_replicas() -> None:
    configs = TopicConfigs(
        default={MIN_INSYNC_REPLICAS: "2"},
        topics={"own": {MIN_INSYNC_REPLICAS: "3"}, "bad": {MIN_INSYNC_REPLICAS: "0"}, "plain": {}},
    )
    assert [configs.min_insync_replicas(t) for t in ("own", "plain", "bad")] == [3, 2, 1]
    assert TopicConfigs().min_insync_replicas("x") == 1


def test_problems_name_the_key_and_the_value() -> None:
    assert config_problems({UNCLEAN: "true", MIN_INSYNC_REPLICAS: "2", "other": "x"}) == []
    assert config_problems({UNCLEAN: "yes", MIN_INSYNC_REPLICAS: "-1"}) == [
        "unclean.leader.election.enable: not a boolean: 'yes'",
        "min.insync.replicas: not a positive integer: '-1'",
    ]


def test_config_change_entities() -> None:
    assert topics_of_entities(["topics/a", "users/u", "topics/b", "brokers/1"]) == ({"a", "b"}, False)
    assert topics_of_entities(["brokers/<default>"]) == (set(), True)
