"""Stream records as numbered: the envelope of one record of :mod:`reassignd.contracts.records`
(its type, time, controller epoch and sequence, and its fields). Pure: no I/O, no clock.

A record is ``{"type", "time", "controller_epoch", "sequence", ...fields}``; ``sequence`` counts
the records of one controller epoch from 1 without gaps, so a reader sees a loss at once. Its id
(the SSE ``id:``) is ``<controller_epoch>-<sequence>``. Partition records carry ``topic`` and
``partition``, batch records ``batch_id``; the Kafka key is ``<topic>-<partition>``, the batch id,
or the topic, so one entity's records stay in one Kafka partition, in order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from reassignd.contracts.records import TYPES

RESERVED = frozenset({"type", "time", "controller_epoch", "sequence"})


@dataclass(frozen=True, slots=True)
class StreamRecord:
    type: str
    time_ms: int
    controller_epoch: int
    sequence: int
    fields: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def id(self) -> str:
        return f"{self.controller_epoch}-{self.sequence}"

    @property
    def key(self) -> str | None:
        """The entity the record is about (the Kafka record key)."""
        f = self.fields
        if "topic" in f and "partition" in f:
            return f"{f['topic']}-{f['partition']}"
        if "batch_id" in f:
            return str(f["batch_id"])
        if "topic" in f:
            return str(f["topic"])
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": iso_time(self.time_ms),
            "controller_epoch": self.controller_epoch,
            "sequence": self.sequence,
            **self.fields,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)


def make_record(
    type_: str, time_ms: int, epoch: int, sequence: int, fields: Mapping[str, Any]
) -> StreamRecord:
    if type_ not in TYPES:
        raise ValueError(f"unknown event type {type_!r}")
    clash = RESERVED.intersection(fields)
    if clash:
        raise ValueError(f"event fields may not be named {sorted(clash)}")
    return StreamRecord(type_, time_ms, epoch, sequence, MappingProxyType(dict(fields)))


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
        f = record.fields
        if self.types and record.type not in self.types:
            return False
        if self.topics and f.get("topic") not in self.topics:
            return False
        return not (self.batches and f.get("batch_id") not in self.batches)
