"""Topic requests and their cases, shared by the HTTP topic tests and the OpenAPI tests."""

from __future__ import annotations

CREATE = {
    "timeout_ms": 5000,
    "validate_only": True,
    "topics": [
        {
            "name": "orders",
            "num_partitions": 12,
            "replication_factor": 3,
            "configs": {"cleanup.policy": "compact"},
        },
        {"name": "audit", "assignments": {"0": [1, 2], "1": [2, 3]}},
        {"name": "bare"},
    ],
}


MALFORMED_CREATE: list[tuple[bytes, str]] = [
    (b"", "request body: invalid JSON"),
    (b"{", "request body: invalid JSON"),
    (b"[]", "request body: expected a JSON object, got an array"),
    (b"{}", "topics: missing required field"),
    (b'{"topics": [], "topics": []}', "topics: duplicate field"),
    (b'{"topics": [], "extra": 1}', "extra: unknown field"),
    (b'{"topics": {}}', "topics: expected an array, got an object"),
    (b'{"topics": [], "timeout_ms": -1}', "timeout_ms: -1 is out of range (0..2147483647)"),
    (b'{"topics": [], "timeout_ms": 2147483648}', "timeout_ms: 2147483648 is out of range"),
    (b'{"topics": [], "timeout_ms": 1.5}', "timeout_ms: expected an integer, got a number"),
    (b'{"topics": [], "timeout_ms": true}', "timeout_ms: expected an integer, got a boolean"),
    (b'{"topics": [], "timeout_ms": NaN}', "request body: invalid JSON: NaN is not a JSON value"),
    (b'{"topics": [], "validate_only": 1}', "validate_only: expected a boolean, got an integer"),
    (b'{"topics": [], "validate_only": null}', "validate_only: expected a boolean, got null"),
    (b'{"topics": ["t"]}', "topics[0]: expected an object, got a string"),
    (b'{"topics": [{}]}', "topics[0].name: missing required field"),
    (b'{"topics": [{"name": null}]}', "topics[0].name: expected a string, got null"),
    (b'{"topics": [{"name": "t", "partitions": 3}]}', "topics[0].partitions: unknown field"),
    (
        b'{"topics": [{"name": "t", "num_partitions": "3"}]}',
        "topics[0].num_partitions: expected an integer, got a string",
    ),
    (
        b'{"topics": [{"name": "t", "num_partitions": false}]}',
        "topics[0].num_partitions: expected an integer, got a boolean",
    ),
    (
        b'{"topics": [{"name": "t", "num_partitions": 2147483648}]}',
        "topics[0].num_partitions: 2147483648 is out of range",
    ),
    (
        b'{"topics": [{"name": "t", "num_partitions": null}]}',
        "topics[0].num_partitions: expected an integer, got null",
    ),
    (
        b'{"topics": [{"name": "t", "replication_factor": 32768}]}',
        "topics[0].replication_factor: 32768 is out of range (-32768..32767)",
    ),
    (
        b'{"topics": [{"name": "t", "replication_factor": 2.5}]}',
        "topics[0].replication_factor: expected an integer, got a number",
    ),
    (
        b'{"topics": [{"name": "t", "assignments": [[1]]}]}',
        "topics[0].assignments: expected an object, got an array",
    ),
    (
        b'{"topics": [{"name": "t", "assignments": {"x": [1]}}]}',
        'topics[0].assignments["x"]: expected a partition id',
    ),
    (
        b'{"topics": [{"name": "t", "assignments": {"-1": [1]}}]}',
        'topics[0].assignments["-1"]: expected a partition id',
    ),
    (
        b'{"topics": [{"name": "t", "assignments": {"01": [1]}}]}',
        'topics[0].assignments["01"]: expected a partition id',
    ),
    (
        b'{"topics": [{"name": "t", "assignments": {"2147483648": [1]}}]}',
        'topics[0].assignments["2147483648"]: expected a partition id',
    ),
    (
        b'{"topics": [{"name": "t", "assignments": {"0": [1], "0": [2]}}]}',
        'topics[0].assignments["0"]: duplicate key',
    ),
    (
        b'{"topics": [{"name": "t", "assignments": {"0": null}}]}',
        'topics[0].assignments["0"]: expected a list of integers, got null',
    ),
    (
        b'{"topics": [{"name": "t", "assignments": {"0": [true]}}]}',
        'topics[0].assignments["0"]: expected a list of integers; item 0 is a boolean',
    ),
    (
        b'{"topics": [{"name": "t", "assignments": {"0": [4294967296]}}]}',
        'topics[0].assignments["0"]: expected a list of integers; item 0 (4294967296) is out of range',
    ),
    (b'{"topics": [{"name": "t", "configs": null}]}', "topics[0].configs: expected an object, got null"),
    (
        b'{"topics": [{"name": "t", "configs": {"a": 1}}]}',
        'topics[0].configs["a"]: expected a string or null, got an integer',
    ),
]


MALFORMED_DELETE: list[tuple[bytes, str]] = [
    (b"null", "request body: expected a JSON object, got null"),
    (b'{"topic": "t"}', "topic: unknown field"),
    (b'{"topics": "t"}', "topics: expected an array, got a string"),
    (b'{"topics": [1]}', "topics[0]: expected a string, got an integer"),
    (b'{"topics": [{"name": "t"}]}', "topics[0]: expected a string, got an object"),
    (b'{"topics": [], "timeout_ms": "1"}', "timeout_ms: expected an integer, got a string"),
    (b'{"topics": [], "validate_only": true}', "validate_only: unknown field"),
]


MALFORMED_PARTITIONS: list[tuple[bytes, str]] = [
    (b'{"topics": [{"name": "t"}]}', "topics[0].count: missing required field"),
    (b'{"topics": [{"count": 2}]}', "topics[0].name: missing required field"),
    (b'{"topics": [{"name": "t", "count": "2"}]}', "topics[0].count: expected an integer, got a string"),
    (b'{"topics": [{"name": "t", "count": 2147483648}]}', "topics[0].count: 2147483648 is out of range"),
    (
        b'{"topics": [{"name": "t", "count": 2, "num_partitions": 2}]}',
        "topics[0].num_partitions: unknown field",
    ),
    (
        b'{"topics": [{"name": "t", "count": 2, "assignments": {"1": [1]}}]}',
        "topics[0].assignments: expected an array, got an object",
    ),
    (
        b'{"topics": [{"name": "t", "count": 2, "assignments": [1]}]}',
        "topics[0].assignments[0]: expected a list of integers, got an integer",
    ),
    (
        b'{"topics": [{"name": "t", "count": 2, "assignments": [null]}]}',
        "topics[0].assignments[0]: expected a list of integers, got null",
    ),
    (
        b'{"topics": [{"name": "t", "count": 2, "assignments": [["1"]]}]}',
        "topics[0].assignments[0]: expected a list of integers; item 0 is a string",
    ),
    (b'{"topics": [], "validate_only": "no"}', "validate_only: expected a boolean, got a string"),
    (b'{"topics": [], "timeout_ms": -5}', "timeout_ms: -5 is out of range"),
]


CASES = [
    *(("/v1/topics", raw, message) for raw, message in MALFORMED_CREATE),
    *(("/v1/topics/delete", raw, message) for raw, message in MALFORMED_DELETE),
    *(("/v1/topics/partitions", raw, message) for raw, message in MALFORMED_PARTITIONS),
]
