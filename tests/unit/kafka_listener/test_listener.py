"""The Kafka listener's pure parts: the codec rules (pitfalls of kafka-python used server-side),
SASL/PLAIN, config alteration, election decisions, the quota filter, the nodes advertised."""

from __future__ import annotations

import struct
import uuid

import pytest
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    CreateTopicsResponse,
)
from kafka.protocol.metadata import ApiVersionsResponse
from kafka.protocol.parser import KafkaProtocol

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
from reassignd.controller.model.config_rules import plan_alteration
from reassignd.controller.model.requests import QuotaDescription
from reassignd.kafka_listener import protocol
from reassignd.kafka_listener.cluster import topic_uuid
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
