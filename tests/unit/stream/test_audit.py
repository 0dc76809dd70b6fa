"""The audit trail's pure core: per-item errors from HTTP answers and Kafka responses alike, capped
name lists, what each Kafka mutation names (real kafka-python request objects), and the two
outputs of one entry: a JSON log line (an object under ``audit`` in JSON format) and an ``audit``
record."""

from __future__ import annotations

import io
import json

from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    AlterReplicaLogDirsRequest,
    DeleteTopicsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
)

from reassignd.controller.model.requests import AlterQuotas, AlterReassignments, CancelMode, QuotaChange
from reassignd.http.audit import named_of as http_named
from reassignd.kafka_listener.audit import named_of as kafka_named
from reassignd.kafka_listener.replica_log_dirs import response_of
from reassignd.log_setup import LogSettings, configure_logging
from reassignd.stream.audit import MAX_NAMES, AuditEntry, AuditTrail, capped, item_errors, result_of
from reassignd.stream.record_log import RecordLog


def test_item_errors_of_every_answer_shape() -> None:
    alter = {
        "error_code": 0,
        "responses": [
            {
                "name": "orders",
                "partitions": [{"partition": 0, "error_code": 0}, {"partition": 1, "error_code": 39}],
            }
        ],
    }
    assert item_errors(alter) == {"orders-1": 39}
    assert item_errors({"topics": [{"name": "a", "error_code": 36}, {"name": "b", "error_code": 0}]}) == {
        "a": 36
    }
    assert item_errors({"results": [{"name": "p", "error_code": 37}]}) == {"p": 37}
    quotas = {"entries": [{"entity": {"user": "alice", "client_id": None}, "error_code": 42}]}
    assert item_errors(quotas) == {"user=alice": 42}
    batch = {"batch": {"batch_id": "b1"}, "partitions": [{"topic": "t", "partition": 3, "error_code": 10002}]}
    assert item_errors(batch) == {"t-3": 10002}
    # Kafka's names for the same things
    elect = {
        "replica_election_results": [
            {"topic": "t", "partition_result": [{"partition_id": 2, "error_code": 84}]}
        ]
    }
    assert item_errors(elect) == {"t-2": 84}
    kafka_quotas = {"entries": [{"error_code": 31, "entity": [{"entity_type": "user", "entity_name": None}]}]}
    assert item_errors(kafka_quotas) == {"user=<default>": 31}
    configs = {"responses": [{"resource_name": "orders", "error_code": 40}]}
    assert item_errors(configs) == {"orders": 40}
    assert item_errors(None) == item_errors([]) == item_errors({"error_code": 41}) == {}


def test_result_has_the_status_the_top_level_code_and_the_failed_items() -> None:
    assert result_of({"error_code": 0, "topics": []}, status=200) == {
        "status": 200,
        "error_code": 0,
        "error_name": "NONE",
    }
    refused = {
        "error_code": 31,
        "error_name": "CLUSTER_AUTHORIZATION_FAILED",
        "error_message": "user v (viewer)",
    }
    assert result_of(refused, status=403) == {
        "status": 403,
        "error_code": 31,
        "error_name": "CLUSTER_AUTHORIZATION_FAILED",
        "error_message": "user v (viewer)",
    }
    assert result_of({"topics": [{"name": "a", "error_code": 89}]}) == {
        "error_code": 0,
        "error_name": "NONE",
        "errors": {"a": 89},
        "error_names": {"89": "THROTTLING_QUOTA_EXCEEDED"},
    }
    # each refused code named once, Kafka's names (the Kafka listener's 29 too)
    per_topic = {"topics": [{"name": n, "error_code": c} for n, c in (("a", 29), ("b", 29), ("c", 36))]}
    assert result_of(per_topic)["error_names"] == {
        "29": "TOPIC_AUTHORIZATION_FAILED",
        "36": "TOPIC_ALREADY_EXISTS",
    }


def test_long_lists_are_cut_and_counted() -> None:
    names = [f"t-{p}" for p in range(MAX_NAMES + 5)]
    out = capped({"partitions": names, "batch_id": "b", "targets": dict.fromkeys(names)})
    assert out["partitions"] == names[:MAX_NAMES] and out["partitions_count"] == MAX_NAMES + 5
    assert len(out["targets"]) == MAX_NAMES and out["targets_count"] == MAX_NAMES + 5
    assert out["batch_id"] == "b"
    assert capped({"topics": ("a", "b")}) == {"topics": ["a", "b"]}


def test_what_http_requests_name() -> None:
    alter = AlterReassignments(((("orders", 0), (4, 5, 6)), (("orders", 1), None)), CancelMode.STOP)
    assert http_named(alter) == {
        "partitions": ["orders-0", "orders-1"],
        "targets": {"orders-0": [4, 5, 6], "orders-1": None},
        "mode": "stop",
    }
    quotas = AlterQuotas((QuotaChange("alice", None, 2.0), QuotaChange(None, "<default>", None)))
    assert http_named(quotas) == {"entities": ["user=alice", "client_id=<default>"]}


def test_what_kafka_requests_name() -> None:
    R = AlterPartitionReassignmentsRequest
    T, P = R.ReassignableTopic, R.ReassignableTopic.ReassignablePartition
    alter = R(
        timeout_ms=1,
        topics=[
            T(
                name="t",
                partitions=[P(partition_index=0, replicas=[2, 3]), P(partition_index=1, replicas=None)],
            )
        ],
    )
    assert kafka_named("AlterPartitionReassignments", alter.to_dict()) == {
        "partitions": ["t-0", "t-1"],
        "targets": {"t-0": [2, 3], "t-1": None},
    }
    delete = DeleteTopicsRequest(topic_names=["a", "b"], timeout_ms=1)
    assert kafka_named("DeleteTopics", delete.to_dict()) == {"topics": ["a", "b"]}
    Q = AlterClientQuotasRequest
    quotas = Q(
        entries=[Q.EntryData(entity=[Q.EntryData.EntityData(entity_type="user", entity_name=None)], ops=[])],
        validate_only=True,
    )
    assert kafka_named("AlterClientQuotas", quotas.to_dict()) == {
        "entities": ["user=<default>"],
        "validate_only": True,
    }
    C = IncrementalAlterConfigsRequest
    configs = C(
        resources=[
            C.AlterConfigsResource(
                resource_type=2,
                resource_name="t",
                configs=[
                    C.AlterConfigsResource.AlterableConfig(name="retention.ms", config_operation=0, value="1")
                ],
            )
        ],
        validate_only=False,
    )
    assert kafka_named("IncrementalAlterConfigs", configs.to_dict()) == {
        "resources": ["topic:t"],
        "configs": ["retention.ms"],
    }
    E = ElectLeadersRequest
    elect = E(
        election_type=1, topic_partitions=[E.TopicPartitions(topic="t", partitions=[0, 2])], timeout_ms=1
    )
    assert kafka_named("ElectLeaders", elect.to_dict()) == {
        "election_type": "unclean",
        "partitions": ["t-0", "t-2"],
    }
    every = E(election_type=0, topic_partitions=None, timeout_ms=1)
    assert kafka_named("ElectLeaders", every.to_dict()) == {"election_type": "preferred", "partitions": None}
    R = AlterReplicaLogDirsRequest
    Dir = R.AlterReplicaLogDir
    moves = R(dirs=[Dir(path="/d2", topics=[Dir.AlterReplicaLogDirTopic(name="t", partitions=[0, 1])])])
    assert kafka_named("AlterReplicaLogDirs", moves.to_dict()) == {"moves": {"t-0": "/d2", "t-1": "/d2"}}
    answer = response_of([("t", 0, 0), ("t", 1, 57)])
    assert item_errors(answer.to_dict()) == {"t-1": 57}


def test_kafka_responses_read_as_http_answers() -> None:
    Resp = AlterPartitionReassignmentsResponse
    Topic, Part = Resp.ReassignableTopicResponse, Resp.ReassignableTopicResponse.ReassignablePartitionResponse
    response = Resp(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        responses=[Topic(name="t", partitions=[Part(partition_index=1, error_code=85, error_message="x")])],
    )
    assert result_of(response.to_dict()) == {
        "error_code": 0,
        "error_name": "NONE",
        "errors": {"t-1": 85},
        "error_messages": {"t-1": "x"},  # each refused item's message, as answered
        "error_names": {"85": "NO_REASSIGNMENT_IN_PROGRESS"},
    }


def test_one_entry_is_a_log_line_and_a_record() -> None:
    stream = io.StringIO()
    configure_logging(LogSettings("info", "json"), stream)
    try:
        events = RecordLog(clock_ms=lambda: 0)
        events.start_epoch(4)
        entry = AuditEntry(
            "http", "DELETE /v1/reassignments/{topic}/{partition}", "alice", "app", "127.0.0.1",
            {"topic": "orders", "partition": 3}, {"status": 200, "error_code": 0, "error_name": "NONE"},
        )  # fmt: skip
        AuditTrail(events, 9000).record(entry)
    finally:
        configure_logging(LogSettings())
    [line] = stream.getvalue().splitlines()
    logged = json.loads(line)
    assert (logged["logger"], logged["msg"], logged["level"]) == ("reassignd.audit", "audit", "info")
    expected = {
        "controller_id": 9000,
        "via": "http",
        "action": "DELETE /v1/reassignments/{topic}/{partition}",
        "user": "alice",
        "client_id": "app",
        "source": "127.0.0.1",
        "topic": "orders",
        "partition": 3,
        "result": {"status": 200, "error_code": 0, "error_name": "NONE"},
    }
    assert logged["audit"] == expected
    [record] = events.history
    assert (record.type, record.id, record.key) == ("audit", "4-1", "orders-3")
    assert dict(record.fields) == expected


def test_text_format_logs_the_entry_as_json() -> None:
    stream = io.StringIO()
    configure_logging(LogSettings("info", "text"), stream)
    try:
        AuditTrail(None).record(AuditEntry("kafka", "CreateTopics", None, "", "::1", {"topics": ["a"]}, {}))
    finally:
        configure_logging(LogSettings())
    line = stream.getvalue().strip()
    assert " reassignd.audit: " in line
    assert json.loads(line.split(" reassignd.audit: ", 1)[1])["topics"] == ["a"]
