"""Replication between agents, follower → leader (``POST /replication/fetch``), Kafka's fetch
sessions in JSON. Pure.
"""

from __future__ import annotations

from typing import Any

import msgspec

from reassignd.control.wire import read_bool, read_int, read_list, read_obj, read_str

NOT_LEADER_OR_FOLLOWER = 6
FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75


class FetchPartition(msgspec.Struct, frozen=True, gc=False):
    """One partition of a fetch. The fetch protocol's values are msgspec structs: the agents
    build thousands per second in a large move (a frozen dataclass costs several times more)."""

    topic: str
    partition: int
    leader_epoch: int  # the leader epoch the follower knows
    fetch_offset: int  # the follower's log end offset
    max_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "leader_epoch": self.leader_epoch,
            "fetch_offset": self.fetch_offset,
            "max_bytes": self.max_bytes,
        }

    @staticmethod
    def from_json(raw: Any) -> FetchPartition:
        if type(raw) is dict:
            get = raw.get
            topic, partition, epoch = get("topic"), get("partition"), get("leader_epoch")
            offset, max_bytes = get("fetch_offset"), get("max_bytes")
            if (
                type(topic) is str
                and type(partition) is int
                and type(epoch) is int
                and type(offset) is int
                and type(max_bytes) is int
            ):
                return FetchPartition(topic, partition, epoch, offset, max_bytes)
        obj = read_obj(raw, "fetch partition")
        return FetchPartition(
            read_str(obj, "topic"),
            read_int(obj, "partition"),
            read_int(obj, "leader_epoch"),
            read_int(obj, "fetch_offset"),
            read_int(obj, "max_bytes"),
        )


class FetchRequest(msgspec.Struct, frozen=True, gc=False):
    """``POST /replication/fetch`` on the leader's agent: one request per (follower, leader) pair
    covers every partition the follower fetches from that leader, like Kafka's replica fetcher.

    Optional incremental fetch session (Kafka's KIP-227, sessions.py): with ``session_id``, epoch 0
    lists every partition and (re)starts the session; epochs 1, 2, ... list only the partitions
    that need it and name those leaving the session in ``forgotten``. Without it every listed
    partition is answered and nothing is remembered."""

    replica_id: int
    partitions: tuple[FetchPartition, ...]
    session_id: int | None = None
    session_epoch: int = 0
    forgotten: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "replica_id": self.replica_id,
            "partitions": [p.to_json() for p in self.partitions],
        }
        if self.session_id is not None:
            out["session_id"] = self.session_id
            out["session_epoch"] = self.session_epoch
            out["forgotten"] = [{"topic": t, "partition": p} for t, p in self.forgotten]
        return out

    @staticmethod
    def from_json(raw: Any) -> FetchRequest:
        obj = read_obj(raw, "request")
        session_id = None
        if obj.get("session_id") is not None:
            session_id = read_int(obj, "session_id")
        forgotten = []
        for f in read_list(obj, "forgotten"):
            fo = read_obj(f, "forgotten partition")
            forgotten.append((read_str(fo, "topic"), read_int(fo, "partition")))
        return FetchRequest(
            read_int(obj, "replica_id"),
            tuple(FetchPartition.from_json(p) for p in read_list(obj, "partitions")),
            session_id,
            read_int(obj, "session_epoch") if session_id is not None else 0,
            tuple(forgotten),
        )


class FetchedPartition(msgspec.Struct, frozen=True, gc=False):
    topic: str
    partition: int
    error_code: int
    bytes: int = 0  # bytes served from the fetch offset
    log_end_offset: int = 0  # the leader's
    high_watermark: int = 0
    in_isr: bool = False  # whether the fetching follower is in the ISR

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "error_code": self.error_code,
            "bytes": self.bytes,
            "log_end_offset": self.log_end_offset,
            "high_watermark": self.high_watermark,
            "in_isr": self.in_isr,
        }

    @staticmethod
    def from_json(raw: Any) -> FetchedPartition:
        if type(raw) is dict:
            get = raw.get
            topic, partition, code, n = get("topic"), get("partition"), get("error_code"), get("bytes")
            leo, hw, in_isr = get("log_end_offset"), get("high_watermark"), get("in_isr")
            if (
                type(topic) is str
                and type(partition) is int
                and type(code) is int
                and type(n) is int
                and type(leo) is int
                and type(hw) is int
                and type(in_isr) is bool
            ):
                return FetchedPartition(topic, partition, code, n, leo, hw, in_isr)
        obj = read_obj(raw, "fetched partition")
        return FetchedPartition(
            read_str(obj, "topic"),
            read_int(obj, "partition"),
            read_int(obj, "error_code"),
            read_int(obj, "bytes"),
            read_int(obj, "log_end_offset"),
            read_int(obj, "high_watermark"),
            read_bool(obj, "in_isr"),
        )


class FetchResponse(msgspec.Struct, frozen=True, gc=False):
    """In a fetch session, ``partitions`` also holds unlisted ones the follower must hear of."""

    error_code: int
    partitions: tuple[FetchedPartition, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"error_code": self.error_code, "partitions": [p.to_json() for p in self.partitions]}

    @staticmethod
    def from_json(raw: Any) -> FetchResponse:
        obj = read_obj(raw, "response")
        return FetchResponse(
            read_int(obj, "error_code"),
            tuple(FetchedPartition.from_json(p) for p in read_list(obj, "partitions")),
        )
