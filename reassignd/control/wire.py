"""What every message between the controller and the agents, and between agents, shares: the
HTTP paths, the body limits, Kafka's error codes, :class:`WireError`, and the strict readers of a
decoded body (:mod:`reassignd.strict_json`'s, refusing with WireError). Pure.

The messages: :mod:`.protocol` (the control requests, controller → agent), :mod:`.request_sizes`
(their encoding and splitting), :mod:`.fetch` (replication, follower → leader) and
:mod:`.replicas_report` (an agent's ``GET /replicas``).
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from reassignd.int_limits import INT64_MAX, INT64_MIN
from reassignd.strict_json import Reader
from reassignd.topic_partition import TopicPartition

LEADER_AND_ISR_PATH = "/control/leader_and_isr"
STOP_REPLICA_PATH = "/control/stop_replica"
UPDATE_METADATA_PATH = "/control/update_metadata"
REPLICAS_PATH = "/replicas"
FETCH_PATH = "/replication/fetch"

# The agent's body limit (aiohttp's client_max_size on its control listener), and the size the
# controller keeps every request below: a quarter of headroom for estimation slack.
MAX_CONTROL_BODY_BYTES = 1024 * 1024
MAX_REQUEST_BYTES = MAX_CONTROL_BODY_BYTES * 3 // 4

INCREMENTAL = "incremental"
FULL = "full"

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
MESSAGE_TOO_LARGE = 10
STALE_CONTROLLER_EPOCH = 11
STALE_BROKER_EPOCH = 77
INVALID_REQUEST = 42


class WireError(ValueError):
    """A control request body that does not match the wire format."""


# strict_json's readers, refusing with WireError ("partition: expected an integer, got null")
READ = Reader(WireError, "body")


def read_int(obj: dict[str, Any], key: str) -> int:
    return READ.integer(obj.get(key), key, INT64_MIN, INT64_MAX)


def read_ints(obj: dict[str, Any], key: str, default: list[int] | None = None) -> tuple[int, ...]:
    return READ.integers(obj.get(key, default), key)


def read_str(obj: dict[str, Any], key: str) -> str:
    return READ.text(obj.get(key), key)


def read_obj(value: Any, what: str) -> dict[str, Any]:
    return READ.obj(value, what, (), None)


def read_list(obj: dict[str, Any], key: str) -> list[Any]:
    return READ.array(obj.get(key, []), key)


def read_bool(obj: dict[str, Any], key: str) -> bool:
    return READ.boolean(obj.get(key), key)


def tp_json(tp: TopicPartition) -> dict[str, Any]:
    return {"topic": tp[0], "partition": tp[1]}


def tp_from_json(raw: Any, what: str) -> TopicPartition:
    obj = read_obj(raw, what)
    return (read_str(obj, "topic"), read_int(obj, "partition"))


S = TypeVar("S")


def convert(raw: Any, kind: type[S], what: str) -> S:
    """``raw`` (decoded JSON) as ``kind``, strictly typed; :class:`WireError` naming the field."""
    if not isinstance(raw, dict):
        raise WireError(f"{what} must be an object")
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as e:
        raise WireError(str(e)) from None


def decode_body(body: bytes, decoder: msgspec.json.Decoder[S]) -> S:
    """A request body decoded straight into its struct; :class:`WireError` for anything else."""
    try:
        return decoder.decode(body)
    except msgspec.ValidationError as e:
        raise WireError(str(e)) from None
    except msgspec.DecodeError as e:
        raise WireError(f"invalid JSON: {e}") from None
