"""Bodies ``POST /v1/log-dirs/moves`` refuses, with the start of the message that names the field."""

from __future__ import annotations

import json


def _body(*moves: object, broker: object = 1) -> bytes:
    return json.dumps({"broker": broker, "moves": list(moves)}).encode()


MOVE = {"topic": "t", "partition": 0, "dir": "/d2"}

MALFORMED: list[tuple[bytes, str]] = [
    (b"", "request body: invalid JSON"),
    (b"[]", "request body: expected a JSON object, got an array"),
    (b'{"moves": []}', "broker: missing required field"),
    (json.dumps({"broker": 1}).encode(), "moves: missing required field"),
    (_body(MOVE, broker=-1), "broker: "),
    (_body(MOVE, broker=2**31), "broker: "),
    (_body(MOVE, broker="1"), "broker: expected an integer"),
    (_body(), "moves: expected 1 to 50000 moves, got 0"),
    (json.dumps({"broker": 1, "moves": {}}).encode(), "moves: expected an array"),
    (json.dumps({"broker": 1, "moves": [MOVE], "x": 1}).encode(), "x: unknown field"),
    (_body({**MOVE, "log_dir": "/d2"}), "moves[0].log_dir: unknown field"),
    (_body({"partition": 0, "dir": "/d2"}), "moves[0].topic: missing required field"),
    (_body({"topic": "t", "dir": "/d2"}), "moves[0].partition: missing required field"),
    (_body({"topic": "t", "partition": 0}), "moves[0].dir: missing required field"),
    (_body({**MOVE, "topic": ""}), "moves[0].topic: Topic name is illegal, it can't be empty"),
    (_body({**MOVE, "topic": ".."}), 'moves[0].topic: Topic name cannot be "." or ".."'),
    (_body({**MOVE, "topic": "a/b"}), 'moves[0].topic: Topic name "a/b" is illegal'),
    (_body({**MOVE, "topic": "t" * 250}), "moves[0].topic: Topic name is illegal, it can't be longer"),
    (_body({**MOVE, "topic": 1}), "moves[0].topic: expected a string, got an integer"),
    (_body({**MOVE, "partition": -1}), "moves[0].partition: "),
    (_body({**MOVE, "dir": ""}), "moves[0].dir: expected a log dir of 1 to 4096 characters, got 0"),
    (_body({**MOVE, "dir": "/" * 4097}), "moves[0].dir: expected a log dir of 1 to 4096 characters"),
    (_body({**MOVE, "dir": None}), "moves[0].dir: expected a string, got null"),
    (_body(MOVE, {**MOVE, "dir": "/d1"}), "moves[1]: duplicate replica t-0"),
]
