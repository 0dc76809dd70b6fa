"""The Kafka listener's pure parts: the codec rules (pitfalls of kafka-python used server-side),
SASL/PLAIN, config alteration, election decisions, the quota filter, the nodes advertised."""

from __future__ import annotations

import struct
import uuid

import pytest
from kafka.protocol.admin import (
    AlterConfigsRequest,
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    CreateTopicsResponse,
    IncrementalAlterConfigsRequest,
)
from kafka.protocol.metadata import ApiVersionsResponse
from kafka.protocol.parser import KafkaProtocol

from reassignd.broker import sim_config
from reassignd.broker.settings import DEFAULT_REPLICATION_BYTES_PER_S
from reassignd.controller.leadership.elect_leaders import (
    ELECTION_NOT_NEEDED,
    ELIGIBLE_LEADERS_NOT_AVAILABLE,
    PREFERRED_LEADER_NOT_AVAILABLE,
    classify,
    preferred_election,
)
from reassignd.controller.model.admin_requests import (
    ConfigChange,
    ConfigOp,
    ConfigResource,
    ElectionType,
    ResourceAlteration,
    ResourceType,
)
from reassignd.controller.model.config_rules import (
    BROKER_SIM_DEFAULTS,
    TOPIC_CONFIG_NAMES,
    TOPIC_SIM_DEFAULTS,
    plan_alteration,
)
from reassignd.controller.model.requests import QuotaDescription
from reassignd.kafka_listener import protocol
from reassignd.kafka_listener.cluster import topic_uuid
from reassignd.kafka_listener.configs import config_entries, request_problems
from reassignd.kafka_listener.limits import RateLimitedLog
from reassignd.kafka_listener.quotas import filter_quotas
from reassignd.kafka_listener.sasl import AuthFailure, authenticate_plain, parse_plain
from reassignd.tokens import Principal, Role
from reassignd.zk.codec import PartitionState


def test_a_response_round_trips_through_the_real_client_parser() -> None:
    client = KafkaProtocol(client_id="t")
    Partition = AlterPartitionReassignmentsRequest.ReassignableTopic.ReassignablePartition
    request = AlterPartitionReassignmentsRequest(
        timeout_ms=30000,
        topics=[
            AlterPartitionReassignmentsRequest.ReassignableTopic(
                name="t",
                partitions=[
                    Partition(partition_index=0, replicas=[3, 1]),
                    Partition(partition_index=1, replicas=None),
                ],
            )
        ],
    )
    request.API_VERSION = 0
    client.send_request(request)
    sent = client.send_bytes()
    prefix = protocol.parse_prefix(sent[4:])
    api = protocol.served(prefix)
    assert api is not None and api.name == "AlterPartitionReassignments"
    decoded = protocol.decode_request(api, sent[4:], prefix.api_version)
    assert [p.replicas for p in decoded.topics[0].partitions] == [[3, 1], None]  # None: cancel
    Topic = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
    response = AlterPartitionReassignmentsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        responses=[
            Topic(
                name="t",
                partitions=[
                    Topic.ReassignablePartitionResponse(partition_index=0, error_code=0, error_message=None)
                ],
            )
        ],
    )
    frame = protocol.encode_response(response, 0, prefix.correlation_id)
    [(_, parsed)] = client.receive_bytes(frame)
    assert parsed.responses[0].partitions[0].partition_index == 0


def test_versions_are_checked_before_decoding_and_too_new_api_versions_gets_kip_511() -> None:
    assert protocol.served(protocol.Prefix(3, 13, 1)) is None  # Metadata v13 is not advertised
    assert protocol.served(protocol.Prefix(0, 0, 1)) is None  # Produce is not served
    frame = protocol.unsupported_api_versions(9)
    answer = ApiVersionsResponse.decode(frame[4:], version=4, header=True)
    assert answer.error_code == 35
    assert {a.api_key: (a.min_version, a.max_version) for a in answer.api_keys} == {
        k: (a.min_version, a.max_version) for k, a in protocol.SERVED.items()
    }
    with pytest.raises(protocol.FrameError):
        protocol.parse_prefix(b"\x00\x03")


def test_a_null_where_the_schema_forbids_it_is_a_bad_frame() -> None:
    request = AlterPartitionReassignmentsRequest(timeout_ms=1, topics=None)
    request.API_VERSION = 0
    request.with_header(correlation_id=1, client_id="x")
    frame = request.encode(header=True, framed=True)
    with pytest.raises(protocol.FrameError, match="Topics is null"):
        protocol.decode_request(protocol.SERVED[45], frame[4:], 0)


def test_a_cached_frame_takes_the_correlation_id_of_each_request() -> None:
    response = CreateTopicsResponse(throttle_time_ms=0, topics=[])
    encoded = protocol.Encoded(protocol.encode_response(response, 7, 1))
    assert struct.unpack_from(">i", encoded.for_request(12345), 4)[0] == 12345


def test_topic_ids_are_kafkas_base64_form() -> None:
    raw = uuid.uuid4()
    import base64  # noqa: PLC0415

    text = base64.urlsafe_b64encode(raw.bytes).decode()[:22]
    assert topic_uuid(text) == raw
    assert topic_uuid(None) == uuid.UUID(int=0)
    assert topic_uuid("not base64!") == uuid.UUID(int=0)


TOKENS = {"s3cret": Principal("alice", Role.ADMIN), "view": Principal("victor", Role.VIEWER)}


def test_sasl_plain() -> None:
    assert parse_plain(b"\x00alice\x00s3cret") == ("", "alice", "s3cret")
    assert parse_plain(b"alice\x00s3cret") is None
    assert authenticate_plain(TOKENS, b"\x00alice\x00s3cret") == TOKENS["s3cret"]
    assert authenticate_plain(TOKENS, b"alice\x00alice\x00s3cret") == TOKENS["s3cret"]
    for bad in (
        b"\x00alice\x00view",
        b"\x00bob\x00s3cret",
        b"\x00alice\x00",
        b"other\x00alice\x00s3cret",
        b"\xff\x00a\x00b",
    ):
        assert isinstance(authenticate_plain(TOKENS, bad), AuthFailure)


def refusal(planned: object) -> object:
    """The error code of a refusal ``(code, message)``; None for anything else."""
    return planned[0] if isinstance(planned, tuple) else None


def alteration(
    *changes: ConfigChange, kind: ResourceType = ResourceType.TOPIC, name: str = "t"
) -> ResourceAlteration:
    return ResourceAlteration(ConfigResource(kind, name), changes)


def test_incremental_alter_configs_merges_as_kafka() -> None:
    stored = {"retention.ms": "1000", "leader.replication.throttled.replicas": "0:1"}
    planned = plan_alteration(
        alteration(
            ConfigChange("retention.ms", ConfigOp.DELETE, None),
            ConfigChange("leader.replication.throttled.replicas", ConfigOp.APPEND, "0:2,0:1"),
            ConfigChange("reassignd.sim.initial.bytes", ConfigOp.SET, "100"),
        ),
        stored,
    )
    assert planned == {
        "leader.replication.throttled.replicas": "0:1,0:2",
        "reassignd.sim.initial.bytes": "100",
    }
    assert refusal(plan_alteration(alteration(ConfigChange("no.such.key", ConfigOp.SET, "1")), {})) == 40
    assert (
        refusal(
            plan_alteration(
                alteration(ConfigChange("unclean.leader.election.enable", ConfigOp.SET, "maybe")), {}
            )
        )
        == 40
    )
    duplicate = alteration(
        ConfigChange("retention.ms", ConfigOp.SET, "1"), ConfigChange("retention.ms", ConfigOp.DELETE, None)
    )
    assert refusal(plan_alteration(duplicate, {})) == 42
    broker = alteration(
        ConfigChange("leader.replication.throttled.rate", ConfigOp.SET, "10"),
        kind=ResourceType.BROKER,
        name="",
    )
    assert plan_alteration(broker, {}) == {"leader.replication.throttled.rate": "10"}
    assert ConfigResource(ResourceType.BROKER, "").path.endswith("/config/brokers/<default>")
    bad_broker = alteration(
        ConfigChange("leader.replication.throttled.rate", ConfigOp.SET, "10"),
        kind=ResourceType.BROKER,
        name="x",
    )
    assert refusal(plan_alteration(bad_broker, {})) == 42


def test_alter_configs_replaces_the_whole_config_as_kafka() -> None:
    """AlterConfigs (33): the keys named are the new config, every other stored key goes (the
    simulation's and the throttles' too); a null value leaves its key unset; the checks are
    IncrementalAlterConfigs' (unknown name 40, bad value 40, duplicate 42)."""
    stored = {"retention.ms": "1000", "reassignd.sim.initial.bytes": "5", "segment.ms": "10"}

    def replacing(*changes: ConfigChange, kind: ResourceType = ResourceType.TOPIC) -> ResourceAlteration:
        return ResourceAlteration(
            ConfigResource(kind, "t" if kind is ResourceType.TOPIC else "1"), changes, True
        )

    planned = plan_alteration(
        replacing(
            ConfigChange("retention.ms", ConfigOp.SET, "2000"),
            ConfigChange("segment.ms", ConfigOp.DELETE, None),
        ),
        stored,
    )
    assert planned == {"retention.ms": "2000"}
    assert plan_alteration(replacing(), stored) == {}
    # the same changes, incremental, keep what they do not name
    incremental = plan_alteration(alteration(ConfigChange("retention.ms", ConfigOp.SET, "2000")), stored)
    assert incremental == {**stored, "retention.ms": "2000"}
    assert refusal(plan_alteration(replacing(ConfigChange("no.such.key", ConfigOp.SET, "1")), stored)) == 40
    assert (
        refusal(plan_alteration(replacing(ConfigChange("segment.bytes", ConfigOp.SET, "13")), stored)) == 40
    )
    twice = replacing(
        ConfigChange("retention.ms", ConfigOp.SET, "1"), ConfigChange("retention.ms", ConfigOp.SET, "2")
    )
    assert refusal(plan_alteration(twice, stored)) == 42
    broker = replacing(
        ConfigChange("leader.replication.throttled.rate", ConfigOp.SET, "10"), kind=ResourceType.BROKER
    )
    assert plan_alteration(broker, {"follower.replication.throttled.rate": "5"}) == {
        "leader.replication.throttled.rate": "10"
    }
    unknown_for_a_broker = replacing(
        ConfigChange("retention.ms", ConfigOp.SET, "1"), kind=ResourceType.BROKER
    )
    assert refusal(plan_alteration(unknown_for_a_broker, {})) == 40


def test_duplicates_in_an_alter_configs_request_are_refused_first() -> None:
    """Before the type and role checks (Kafka's preprocessing): every entry of a resource named
    twice, and an entry naming a key twice, 42; the others are left to the later checks."""
    Incremental = IncrementalAlterConfigsRequest.AlterConfigsResource

    def incremental(kind: int, name: str, *keys: str) -> object:
        return Incremental(
            resource_type=kind,
            resource_name=name,
            configs=[Incremental.AlterableConfig(name=k, config_operation=0, value="1") for k in keys],
        )

    resources = [
        incremental(2, "t", "retention.ms"),
        incremental(2, "u", "retention.ms", "segment.ms", "retention.ms"),
        incremental(99, "t", "x"),
        incremental(2, "t", "segment.ms"),
        incremental(4, "1", "a", "a"),
        incremental(99, "z", "x", "x"),
        incremental(4, "2", "a"),
    ]
    duplicate = (42, "Each resource must appear at most once.")
    assert request_problems(resources) == {
        0: duplicate,
        1: (42, "Error due to duplicate config keys : retention.ms"),
        3: duplicate,
        4: (42, "Error due to duplicate config keys : a"),
        5: (42, "Error due to duplicate config keys : x"),
    }
    Replacing = AlterConfigsRequest.AlterConfigsResource
    legacy = [
        Replacing(
            resource_type=4, resource_name=name, configs=[Replacing.AlterableConfig(name="a", value="1")]
        )
        for name in ("1", "01", "")
    ]
    assert request_problems(legacy) == {0: duplicate, 1: duplicate}
    assert request_problems([]) == {}


def test_describe_configs_lists_every_settable_key_set_or_not() -> None:
    """Every key a tool may set is listed (kafka-python checks names against the list before it
    alters): stored ones with their source, the others DEFAULT_CONFIG (5) with the default
    reassignd applies, the simulation's keys among them; v0 carries is_default instead."""
    topic = ConfigResource(ResourceType.TOPIC, "t")
    entries = {e.name: e for e in config_entries(topic, {"retention.ms": "1", "x.foreign": "y"}, None, 1)}
    assert set(entries) == TOPIC_CONFIG_NAMES | set(TOPIC_SIM_DEFAULTS) | {"x.foreign"}
    assert (entries["retention.ms"].value, entries["retention.ms"].config_source) == ("1", 1)
    assert (entries["x.foreign"].value, entries["x.foreign"].config_source) == ("y", 1)
    initial = entries[sim_config.INITIAL_BYTES]
    assert (initial.value, initial.config_source, initial.config_type, initial.read_only) == (
        "0",
        5,
        5,
        False,
    )
    assert entries[sim_config.PRODUCE_BYTES_PER_S].value == "0"
    assert (entries["min.insync.replicas"].value, entries["min.insync.replicas"].config_type) == ("1", 3)
    assert (entries["segment.ms"].value, entries["segment.ms"].config_source) == (None, 5)
    assert entries["cleanup.policy"].config_type == 7  # LIST
    assert entries["min.cleanable.dirty.ratio"].config_type == 6  # DOUBLE

    broker = ConfigResource(ResourceType.BROKER, "1")
    named = config_entries(broker, {}, [sim_config.REPLICATION_BYTES_PER_S, "no.such"], 0)
    assert [(e.name, e.value, e.is_default) for e in named] == [
        (sim_config.REPLICATION_BYTES_PER_S, str(DEFAULT_REPLICATION_BYTES_PER_S), True)
    ]
    default_broker = ConfigResource(ResourceType.BROKER, "")
    stored = config_entries(default_broker, {sim_config.REPLICATION_BYTES_PER_S: "7"}, None, 1)
    assert {e.name: e.config_source for e in stored}[sim_config.REPLICATION_BYTES_PER_S] == 3
    # the simulation's keys are the agents' own, with the agents' defaults
    assert set(TOPIC_SIM_DEFAULTS) == {sim_config.INITIAL_BYTES, sim_config.PRODUCE_BYTES_PER_S}
    assert sim_config.topic_sim_config(None) == sim_config.TopicSimConfig(
        initial_bytes=int(TOPIC_SIM_DEFAULTS[sim_config.INITIAL_BYTES]),
        produce_bytes_per_s=float(TOPIC_SIM_DEFAULTS[sim_config.PRODUCE_BYTES_PER_S]),
    )
    assert {sim_config.REPLICATION_BYTES_PER_S: str(DEFAULT_REPLICATION_BYTES_PER_S)} == BROKER_SIM_DEFAULTS


def test_election_decisions() -> None:
    live = {1, 2, 3}
    led_by_2 = PartitionState(2, 4, 1, (1, 2))
    assert classify(ElectionType.PREFERRED, (1, 2), led_by_2, live) is None
    assert preferred_election((1, 2), led_by_2, live, 7, False) == PartitionState(1, 5, 7, (1, 2))
    assert classify(ElectionType.PREFERRED, (2, 1), led_by_2, live) == ELECTION_NOT_NEEDED
    assert (
        classify(ElectionType.PREFERRED, (1, 2), PartitionState(2, 4, 1, (2,)), live)
        == PREFERRED_LEADER_NOT_AVAILABLE
    )
    assert classify(ElectionType.PREFERRED, (1, 2), led_by_2, {2}) == PREFERRED_LEADER_NOT_AVAILABLE
    assert classify(ElectionType.UNCLEAN, (1, 2), led_by_2, live) == ELECTION_NOT_NEEDED
    assert classify(ElectionType.UNCLEAN, (1, 2), PartitionState(-1, 4, 1, (1,)), {2}) is None
    assert (
        classify(ElectionType.UNCLEAN, (1, 2), PartitionState(-1, 4, 1, (1,)), {3})
        == ELIGIBLE_LEADERS_NOT_AVAILABLE
    )


class _Component:
    def __init__(self, entity_type: str, match_type: int, match: str | None = None) -> None:
        self.entity_type, self.match_type, self.match = entity_type, match_type, match


def test_the_client_quota_filter() -> None:
    rate = (("controller_mutation_rate", 1.0),)
    entries = (
        QuotaDescription("alice", None, rate),
        QuotaDescription("alice", "app", rate),
        QuotaDescription(None, "app", rate),
        QuotaDescription("<default>", None, rate),
    )
    assert filter_quotas(entries, [_Component("user", 0, "alice")], False) == list(entries[:2])
    assert filter_quotas(entries, [_Component("user", 0, "alice")], True) == [entries[0]]
    assert filter_quotas(entries, [_Component("user", 1)], False) == [entries[3]]
    assert filter_quotas(entries, [_Component("client-id", 2)], True) == [entries[2]]
    assert refusal(filter_quotas(entries, [_Component("ip", 2)], False)) == 42


def test_the_warning_log_cannot_flood() -> None:
    lines: list[str] = []

    class Sink:
        def warning(self, fmt: str, *args: object) -> None:
            lines.append(fmt % args)

    now = [100.0]
    warn = RateLimitedLog(Sink(), per_s=3, clock=lambda: now[0])  # type: ignore[arg-type]
    for i in range(10):
        warn("line %d", i)
    now[0] = 101.0
    warn("later")
    assert lines == ["line 0", "line 1", "line 2", "later (and 7 similar lines not logged)"]
