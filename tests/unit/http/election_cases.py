"""The election requests' malformed bodies, shared by the HTTP election tests and the OpenAPI tests."""

from __future__ import annotations

MALFORMED: list[tuple[bytes, str]] = [
    (b"", "request body: invalid JSON"),
    (b"[]", "request body: expected a JSON object, got an array"),
    (b'{"partitions": null}', "election_type: missing required field"),
    (b'{"election_type": "preferred"}', "partitions: missing required field"),
    (
        b'{"election_type": "PREFERRED", "partitions": null}',
        'election_type: expected "preferred" or "unclean"',
    ),
    (b'{"election_type": 0, "partitions": null}', 'election_type: expected "preferred" or "unclean"'),
    (b'{"election_type": "preferred", "partitions": {}}', "partitions: expected an array, got an object"),
    (
        b'{"election_type": "preferred", "partitions": null, "timeout_ms": 5}',
        "timeout_ms: unknown field",
    ),
    (
        b'{"election_type": "preferred", "partitions": [{"topic": "t"}]}',
        "partitions[0].partition: missing required field",
    ),
    (
        b'{"election_type": "preferred", "partitions": [{"partition": 0}]}',
        "partitions[0].topic: missing required field",
    ),
    (
        b'{"election_type": "preferred", "partitions": [{"topic": 1, "partition": 0}]}',
        "partitions[0].topic: expected a string, got an integer",
    ),
    (
        b'{"election_type": "preferred", "partitions": [{"topic": "t", "partition": -1}]}',
        "partitions[0].partition: ",
    ),
    (
        b'{"election_type": "preferred", "partitions": [{"topic": "t", "partition": 2147483648}]}',
        "partitions[0].partition: ",
    ),
    (
        b'{"election_type": "preferred", "partitions": [{"topic": "t", "partition": 0, "replicas": []}]}',
        "partitions[0].replicas: unknown field",
    ),
    (
        b'{"election_type": "preferred", "partitions": [{"topic": "t", "partition": 1.5}]}',
        "partitions[0].partition: expected an integer, got a number",
    ),
]
