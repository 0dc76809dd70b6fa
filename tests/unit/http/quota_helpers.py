"""Helpers of the HTTP quota tests: an entry and malformed bodies, shared with the OpenAPI tests."""

from __future__ import annotations

from typing import Any


def entry(entity: dict[str, str], *ops: tuple[str, float | None]) -> dict[str, Any]:
    return {"entity": entity, "ops": [{"key": k, "value": v} for k, v in ops]}


MALFORMED: list[tuple[bytes, str]] = [
    (b"", "request body: invalid JSON"),
    (b'{"entries": {}}', "entries: expected an array, got an object"),
    (b"{}", "entries: missing required field"),
    (b'{"entries": [], "validate_only": false}', "validate_only: unknown field"),
    (b'{"entries": [{"entity": {"user": "u"}}]}', "entries[0].ops: missing required field"),
    (b'{"entries": [{"ops": []}]}', "entries[0].entity: missing required field"),
    (b'{"entries": [{"entity": null, "ops": []}]}', "entries[0].entity: expected an object, got null"),
    (
        b'{"entries": [{"entity": {"user": 1}, "ops": []}]}',
        "entries[0].entity.user: expected a string, got an integer",
    ),
    (
        b'{"entries": [{"entity": {"user": null}, "ops": []}]}',
        "entries[0].entity.user: expected a string, got null",
    ),
    (
        b'{"entries": [{"entity": {"client-id": "c"}, "ops": []}]}',
        "entries[0].entity.client-id: unknown field",
    ),
    (
        b'{"entries": [{"entity": {"user": "u", "user": "v"}, "ops": []}]}',
        "entries[0].entity.user: duplicate field",
    ),
    (b'{"entries": [{"entity": {}, "ops": {}}]}', "entries[0].ops: expected an array, got an object"),
    (
        b'{"entries": [{"entity": {}, "ops": [{"key": "k"}]}]}',
        "entries[0].ops[0].value: missing required field",
    ),
    (
        b'{"entries": [{"entity": {}, "ops": [{"value": 1}]}]}',
        "entries[0].ops[0].key: missing required field",
    ),
    (
        b'{"entries": [{"entity": {}, "ops": [{"key": 1, "value": 1}]}]}',
        "entries[0].ops[0].key: expected a string, got an integer",
    ),
    (
        b'{"entries": [{"entity": {}, "ops": [{"key": "k", "value": "2.0"}]}]}',
        "entries[0].ops[0].value: expected a number, got a string",
    ),
    (
        b'{"entries": [{"entity": {}, "ops": [{"key": "k", "value": true}]}]}',
        "entries[0].ops[0].value: expected a number, got a boolean",
    ),
    (
        b'{"entries": [{"entity": {}, "ops": [{"key": "k", "value": 1e400}]}]}',
        "entries[0].ops[0].value: out of range for a double",
    ),
    (
        b'{"entries": [{"entity": {}, "ops": [{"key": "k", "value": ' + b"9" * 400 + b"}]}]}",
        "entries[0].ops[0].value: out of range for a double",
    ),
    (
        b'{"entries": [{"entity": {}, "ops": [{"key": "k", "value": Infinity}]}]}',
        "request body: invalid JSON: Infinity is not a JSON value",
    ),
    (
        b'{"entries": [{"entity": {}, "ops": [{"key": "k", "value": 1, "remove": true}]}]}',
        "entries[0].ops[0].remove: unknown field",
    ),
]
