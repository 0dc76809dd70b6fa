"""The control requests' encoding, sizes and splitting: the controller keeps every body below the
agent's limit (:data:`~reassignd.control.wire.MAX_REQUEST_BYTES`) by adding up sizes instead of
encoding, and halves a request the agent refused as too large. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

import msgspec

from reassignd.control.protocol import (
    ControlRequest,
    EncodedStates,
    LeaderAndIsrRequest,
    StopReplicaPartition,
    StopReplicaRequest,
    UpdateMetadataRequest,
    WirePartitionState,
)
from reassignd.control.wire import tp_json
from reassignd.topic_partition import TopicPartition

_COMPACT = (",", ":")


_STATES = msgspec.json.Encoder()


def encode_request(request: ControlRequest) -> bytes:
    """The body the controller sends: compact JSON, the same bytes as
    ``json.dumps(request.to_json())`` for Kafka's (ASCII) topic names; partition states are
    encoded by msgspec, in C (the sizes above count a name's JSON escapes, an upper bound)."""
    if isinstance(request, StopReplicaRequest):
        return json.dumps(request.to_json(), separators=_COMPACT).encode()
    header = json.dumps(request.header.to_json(), separators=_COMPACT).encode()
    tail = json.dumps(request.to_json_without_states(), separators=_COMPACT).encode()
    kept = request.partition_states
    states = kept.json() if isinstance(kept, EncodedStates) else _STATES.encode(kept)
    return b"".join((header[:-1], b',"partition_states":', states, b",", tail[1:]))


def _encoded_len(obj: Any) -> int:
    return len(json.dumps(obj, separators=_COMPACT))


@lru_cache(maxsize=65536)
def str_size(s: str) -> int:
    """Encoded size of a JSON string (quotes and escapes included)."""
    return _encoded_len(s)


def _int_size(v: int) -> int:
    return 1 if 0 <= v < 10 else len(str(v))


# fixed parts of each item (keys, braces, separators), measured once from minimal items
_TP_FIXED = _encoded_len(tp_json(("", 0))) - (2 + 1)
_STOP_FIXED = _encoded_len(StopReplicaPartition("", 0, 0, False).to_json()) - (2 + 1 + 1 + 5)


def state_size(ws: WirePartitionState) -> int:
    """Encoded size of ``ws`` in a request body: msgspec encodes one in well under a
    microsecond, faster than adding up its parts in Python, and exact."""
    return len(_STATES.encode(ws))


def tp_size(tp: TopicPartition) -> int:
    """Encoded size of ``{"topic": ..., "partition": ...}``."""
    return _TP_FIXED + str_size(tp[0]) + _int_size(tp[1])


def stop_partition_size(p: StopReplicaPartition) -> int:
    """Encoded size of ``p.to_json()``."""
    return (
        _STOP_FIXED
        + str_size(p.topic)
        + _int_size(p.partition)
        + _int_size(p.leader_epoch)
        + (4 if p.delete_partition else 5)
    )


def split_request(request: ControlRequest) -> tuple[ControlRequest, ControlRequest] | None:
    """``request`` as two requests of about half the partitions each (None if it names fewer than
    two). A full LeaderAndIsr chunk's halves keep its ``full`` object: the set still counts its
    partitions, so it completes once both halves are delivered."""
    match request:
        case LeaderAndIsrRequest():
            states, without = request.partition_states, request.partitions_without_state
            n = len(states) + len(without)
            if n < 2:
                return None
            mid = n // 2
            cut = max(0, mid - len(states))

            def half(ss: Sequence[WirePartitionState], ws: tuple[TopicPartition, ...]) -> LeaderAndIsrRequest:
                leaders = {s.leader for s in ss}
                return replace(
                    request,
                    partition_states=ss,
                    partitions_without_state=ws,
                    live_leaders=tuple(b for b in request.live_leaders if b.broker_id in leaders),
                )

            return half(states[:mid], without[:cut]), half(states[mid:], without[cut:])
        case UpdateMetadataRequest():
            if len(request.partition_states) < 2:
                return None
            mid = len(request.partition_states) // 2
            return (
                replace(request, partition_states=request.partition_states[:mid]),
                replace(request, partition_states=request.partition_states[mid:]),
            )
        case StopReplicaRequest():
            if len(request.partitions) < 2:
                return None
            mid = len(request.partitions) // 2
            return (
                replace(request, partitions=request.partitions[:mid]),
                replace(request, partitions=request.partitions[mid:]),
            )


def partitions_of(request: ControlRequest) -> list[TopicPartition]:
    """Every partition a request names."""
    match request:
        case LeaderAndIsrRequest():
            return [(s.topic, s.partition) for s in request.partition_states] + list(
                request.partitions_without_state
            )
        case UpdateMetadataRequest():
            return [(s.topic, s.partition) for s in request.partition_states]
        case StopReplicaRequest():
            return [(p.topic, p.partition) for p in request.partitions]
