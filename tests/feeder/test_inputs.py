"""Reading clusters and sizes from files: Kafka's tools' output, our snapshot JSON, and clear
errors (file, line or JSON path) for what cannot be used."""

from __future__ import annotations

import json

import pytest

from reassignd.feeder.inputs import InputError, parse_cluster_file, parse_log_dirs, parse_sizes_file

DESCRIBE = """\
Topic: orders\tTopicId: 6x3H1JqwTg2w1Q\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: segment.bytes=1073741824
\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3
\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3,4\tIsr: 2,3
Topic:audit\tPartitionCount:1\tReplicationFactor:2\tConfigs:
\tTopic: audit\tPartition: 0\tLeader: 4\tReplicas: 4,1\tIsr: 4,1\tOffline:
"""

LOG_DIRS = (
    "Querying brokers for log directories information\n"
    "Received log directory information from brokers 1,2\n"
    + json.dumps(
        {
            "version": 1,
            "brokers": [
                {
                    "broker": 1,
                    "logDirs": [
                        {
                            "logDir": "/var/kafka",
                            "error": None,
                            "partitions": [
                                {"partition": "orders-0", "size": 500, "offsetLag": 0, "isFuture": False},
                                {"partition": "my-topic-1-0", "size": 7, "offsetLag": 0, "isFuture": False},
                            ],
                        }
                    ],
                },
                {
                    "broker": 2,
                    "logDirs": [
                        {
                            "logDir": "/var/kafka",
                            "error": None,
                            "partitions": [
                                {"partition": "orders-0", "size": 480, "offsetLag": 20, "isFuture": False},
                                {"partition": "orders-0", "size": 9999, "offsetLag": 0, "isFuture": True},
                            ],
                        }
                    ],
                },
            ],
        }
    )
    + "\n"
)


def test_kafka_topics_describe() -> None:
    cluster = parse_cluster_file(DESCRIBE, "describe.txt")
    assert [(r[0], r[1], r[4]) for r in cluster.rows] == [
        ("audit", 0, (4, 1)),
        ("orders", 0, (1, 2, 3)),
        ("orders", 1, (2, 3, 4)),
    ]
    assert dict(cluster.racks) == {1: None, 2: None, 3: None, 4: None}


def test_describe_errors_name_the_line() -> None:
    with pytest.raises(InputError, match=r"describe.txt:2: partition and replicas must be integers"):
        parse_cluster_file(
            "Topic: a PartitionCount: 1\n\tTopic: a\tPartition: 0\tLeader: 1\tReplicas: 1,x\n", "describe.txt"
        )
    with pytest.raises(InputError, match="no partition lines"):
        parse_cluster_file("nothing here\n", "empty.txt")
    with pytest.raises(InputError, match="orders-0 lists a replica twice"):
        parse_cluster_file("\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,1\n", "dup.txt")


def test_snapshot_json() -> None:
    doc = {
        "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "b"}, {"id": 3, "rack": None}],
        "topics": [
            {"name": "t", "partitions": [{"partition": 0, "replicas": [2, 1], "size_bytes": 42, "leader": 2}]}
        ],
    }
    cluster = parse_cluster_file(json.dumps(doc), "snap.json")
    assert cluster.rows == (("t", 0, 42, (2, 1), (2, 1)),)
    assert dict(cluster.racks) == {1: "a", 2: "b", 3: None}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"brokers": {}, "topics": []}, "snap.json: brokers: expected an array, got dict"),
        ({"brokers": [{"id": "1"}], "topics": []}, r"brokers\[0\].id: expected an integer, got str"),
        (
            {
                "brokers": [{"id": 1}],
                "topics": [{"name": "t", "partitions": [{"partition": 0, "replicas": [1, -2]}]}],
            },
            r"topics\[0\].partitions\[0\].replicas\[1\]: expected a non-negative integer",
        ),
        (
            {
                "brokers": [{"id": 1}],
                "topics": [{"name": "t", "partitions": [{"partition": 0, "replicas": [1, 1]}]}],
            },
            r"t-0 lists a replica twice",
        ),
    ],
)
def test_snapshot_errors_name_the_path(doc: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_cluster_file(json.dumps(doc), "snap.json")


def test_brokers_not_listed_are_offline() -> None:
    doc = {
        "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "b"}],
        "topics": [{"name": "t", "partitions": [{"partition": 0, "replicas": [1, 5]}]}],
    }
    cluster = parse_cluster_file(json.dumps(doc), "snap.json")
    assert cluster.offline == {5} and cluster.racks[5] is None


def test_invalid_json_is_an_input_error() -> None:
    with pytest.raises(InputError, match=r"snap.json: invalid JSON"):
        parse_cluster_file("{not json", "snap.json")


def test_kafka_log_dirs_sizes() -> None:
    sizes = parse_sizes_file(LOG_DIRS, "sizes.txt")
    # the largest replica counts; a future replica (an intra-broker move) does not
    assert sizes == {("orders", 0): 500, ("my-topic-1", 0): 7}


def test_log_dirs_in_snake_case() -> None:
    doc = {
        "brokers": [{"broker": 1, "log_dirs": [{"partitions": [{"topic": "t", "partition": 3, "size": 9}]}]}]
    }
    assert parse_log_dirs(doc, "GET /v1/log-dirs") == {("t", 3): 9}


def test_sizes_errors() -> None:
    with pytest.raises(InputError, match="no JSON object found"):
        parse_sizes_file("Querying brokers\n", "s.txt")
    bad = {"brokers": [{"broker": 1, "logDirs": [{"partitions": [{"partition": "nodash", "size": 1}]}]}]}
    with pytest.raises(
        InputError, match=r"brokers\[0\].logDirs\[0\].partitions\[0\].partition: expected TOPIC-PARTITION"
    ):
        parse_sizes_file(json.dumps(bad), "s.txt")
