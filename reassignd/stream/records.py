"""Stream records as numbered: one typed record of :mod:`reassignd.contracts.records` in its
envelope (time, controller epoch and sequence). Pure: no I/O, no clock.

The record stays the contract's struct all the way to the edge: the filters of ``GET /v1/events``
and the Kafka key read its typed fields, and it is encoded to JSON only where it leaves the
process (the SSE frame, the Kafka record), once however many streams carry it. On the wire a
record is ``{"type", "time", "controller_epoch", "sequence", ...fields}``; ``sequence`` counts
the records of one controller epoch from 1 without gaps, so a reader sees a loss at once. Its id
(the SSE ``id:``) is ``<controller_epoch>-<sequence>``. Partition records carry ``topic`` and
``partition``, batch records ``batch_id``; the Kafka key is ``<topic>-<partition>``, the batch id,
or the topic, so one entity's records stay in one Kafka partition, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

import msgspec

from reassignd.contracts.records import Audit, Record, record_fields, record_type

RESERVED = frozenset({"type", "time", "controller_epoch", "sequence"})

_ABSENT = object()


def _field(record: Record, name: str) -> Any:
    """A typed field of the record (an audit record's: what it named), or ``_ABSENT``."""
    if isinstance(record, Audit):
        return record.named.get(name, _ABSENT)
    return getattr(record, name, _ABSENT)


@dataclass(frozen=True)
class StreamRecord:
    record: Record  # the typed change, as the controller built it
    time_ms: int
    controller_epoch: int
    sequence: int

    @property
    def type(self) -> str:
        return record_type(self.record)

    @property
    def id(self) -> str:
        return f"{self.controller_epoch}-{self.sequence}"

    @property
    def topic(self) -> Any:
        """The record's ``topic`` field (None when it has none)."""
        topic = _field(self.record, "topic")
        return None if topic is _ABSENT else topic

    @property
    def batch_id(self) -> Any:
        batch = _field(self.record, "batch_id")
        return None if batch is _ABSENT else batch

    @property
    def key(self) -> str | None:
        """The entity the record is about (the Kafka record key)."""
        topic, partition = _field(self.record, "topic"), _field(self.record, "partition")
        if topic is not _ABSENT and partition is not _ABSENT:
            return f"{topic}-{partition}"
        if (batch := _field(self.record, "batch_id")) is not _ABSENT:
            return str(batch)
        if topic is not _ABSENT:
            return str(topic)
        return None

    @property
    def fields(self) -> dict[str, Any]:
        """The record's fields as JSON values, in their declared order (built when asked)."""
        return record_fields(self.record)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": iso_time(self.time_ms),
            "controller_epoch": self.controller_epoch,
            "sequence": self.sequence,
            **self.fields,
        }

    @cached_property
    def json(self) -> bytes:
        """The record as its JSON object, encoded once (the edges: SSE and the Kafka topic)."""
        return msgspec.json.encode(self.to_dict())

    def to_json(self) -> str:
        return self.json.decode()


def make_record(record: Record, time_ms: int, epoch: int, sequence: int) -> StreamRecord:
    """``record`` numbered; an audit record naming a reserved field is refused (ValueError)."""
    if isinstance(record, Audit) and (clash := RESERVED.intersection(record.named)):
        raise ValueError(f"event fields may not be named {sorted(clash)}")
    return StreamRecord(record, time_ms, epoch, sequence)


def iso_time(time_ms: int) -> str:
    return (
        datetime.fromtimestamp(time_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{time_ms % 1000:03d}Z"
    )


def parse_id(text: str) -> tuple[int, int] | None:
    """``(epoch, sequence)`` of a record id, or None when it is not one."""
    epoch, sep, seq = text.strip().partition("-")
    if not sep or not epoch.isdigit() or not seq.isdigit():
        return None
    return int(epoch), int(seq)


@dataclass(frozen=True, slots=True)
class Filters:
    """``?type=``, ``?topic=``, ``?batch=``: each a set of accepted values (empty: any)."""

    types: frozenset[str] = frozenset()
    topics: frozenset[str] = frozenset()
    batches: frozenset[str] = frozenset()

    def accepts(self, record: StreamRecord) -> bool:
        if self.types and record.type not in self.types:
            return False
        if self.topics and record.topic not in self.topics:
            return False
        return not (self.batches and record.batch_id not in self.batches)
