"""The pure parts of JBOD on the listener and the HTTP API: an agent's report with log dirs as
DescribeLogDirs results and as ``GET /v1/log-dirs``, AlterReplicaLogDirs' moves and answers, and
an agent without ``--log-dirs`` answered exactly as before."""

from __future__ import annotations

import msgspec
from kafka.protocol.admin import AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse

from reassignd.control.replicas_report import FutureInfo, LogDirInfo, ReplicaInfo, ReplicasReport
from reassignd.http.routes.log_dirs import log_dirs_json
from reassignd.kafka_listener.door import log_dir_moves
from reassignd.kafka_listener.log_dirs import log_dir_results
from reassignd.kafka_listener.replica_log_dirs import response_of

Dir = AlterReplicaLogDirsRequest.AlterReplicaLogDir
Topic = Dir.AlterReplicaLogDirTopic


def replica(topic: str, partition: int, size: int, log_dir: str | None) -> ReplicaInfo:
    return ReplicaInfo(topic, partition, True, size, 0, 0.0, True, log_dir)


JBOD = ReplicasReport(
    1,
    (replica("t", 0, 300, "/d1"), replica("t", 1, 200, "/d2")),
    log_dirs=(
        LogDirInfo("/d1", 300, -1, -1),
        LogDirInfo("/d2", 320, 1000, 680, (FutureInfo("t", 0, 120, 180),)),
    ),
)


def test_describe_log_dirs_lists_each_dir_with_its_future_replicas() -> None:
    results = log_dir_results([1], {1: JBOD}, None)
    got = {
        r.log_dir: (
            r.total_bytes,
            r.usable_bytes,
            [
                (t.name, p.partition_index, p.partition_size, p.offset_lag, p.is_future_key)
                for t in r.topics
                for p in t.partitions
            ],
        )
        for r in results
    }
    assert got == {
        "/d1": (-1, -1, [("t", 0, 300, 0, False)]),
        "/d2": (1000, 680, [("t", 0, 120, 180, True), ("t", 1, 200, 0, False)]),
    }
    only = log_dir_results([1], {1: JBOD}, {("t", 1)})
    assert [[p.partition_index for t in r.topics for p in t.partitions] for r in only] == [[], [1]]


def test_http_log_dirs_likewise() -> None:
    doc = log_dirs_json([1], {1: JBOD})
    (d1, d2) = doc.brokers[0].log_dirs
    assert (d1.log_dir, d1.total_bytes, d2.log_dir, d2.total_bytes, d2.usable_bytes) == (
        "/d1",
        -1,
        "/d2",
        1000,
        680,
    )
    assert [(p.partition, p.size, p.offset_lag, p.is_future) for p in d2.partitions] == [
        ("t-0", 120, 180, True),
        ("t-1", 200, 0, False),
    ]


def test_an_agent_without_log_dirs_is_answered_as_before() -> None:
    plain = ReplicasReport(2, (replica("t", 0, 300, None),))
    (result,) = log_dir_results([2], {2: plain}, None)
    assert (result.log_dir, result.total_bytes, result.usable_bytes) == ("/sim/broker-2", -1, -1)
    body = msgspec.json.decode(msgspec.json.encode(log_dirs_json([2], {2: plain})))
    assert body["brokers"][0]["logDirs"] == [
        {
            "logDir": "/sim",
            "error": None,
            "partitions": [{"partition": "t-0", "size": 300, "offsetLag": 0, "isFuture": False}],
        }
    ]


def test_alter_replica_log_dirs_moves_and_answer() -> None:
    request = AlterReplicaLogDirsRequest(
        dirs=[Dir(path="/d2", topics=[Topic(name="t", partitions=[0, 1]), Topic(name="u", partitions=[3])])]
    )
    moves = log_dir_moves(request)
    assert [(m.topic, m.partition, m.dir) for m in moves] == [
        ("t", 0, "/d2"),
        ("t", 1, "/d2"),
        ("u", 3, "/d2"),
    ]
    response = response_of([("t", 0, 0), ("u", 3, 57), ("t", 1, 9)])
    encoded = response.encode(version=2)
    decoded = AlterReplicaLogDirsResponse.decode(encoded, version=2)
    assert [
        (t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in decoded.results
    ] == [
        ("t", [(0, 0), (1, 9)]),
        ("u", [(3, 57)]),
    ]
