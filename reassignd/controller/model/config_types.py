"""The types and bounds of Kafka's topic configs (LogConfig, 3.x) and of the dynamic broker configs
reassignd knows, and the check of a value against them, with Kafka's words (ConfigDef's
``Invalid value V for configuration N: ...``). Pure.

Kafka parses a config value when a topic is created or its config altered and answers 40
INVALID_CONFIG when it does not parse; reassignd does the same at the door
(``model/admission.py``) and again before it writes (``model/config_rules.py``).
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass

from reassignd.int_limits import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN


class Kind(enum.Enum):
    BOOLEAN = "BOOLEAN"
    INT = "INT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    STRING = "STRING"
    LIST = "LIST"


_INTEGER = re.compile(r"[+-]?[0-9]+")
_DOUBLE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


@dataclass(frozen=True, slots=True)
class ConfigType:
    """A config's type, its inclusive bounds (numbers) and its valid strings (STRING, LIST items)."""

    kind: Kind
    at_least: float | None = None
    at_most: float | None = None
    one_of: tuple[str, ...] = ()


_COMPRESSION = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")

TOPIC_CONFIG_TYPES: dict[str, ConfigType] = {
    "cleanup.policy": ConfigType(Kind.LIST, one_of=("compact", "delete")),
    "compression.type": ConfigType(Kind.STRING, one_of=_COMPRESSION),
    "delete.retention.ms": ConfigType(Kind.LONG, at_least=0),
    "file.delete.delay.ms": ConfigType(Kind.LONG, at_least=0),
    "flush.messages": ConfigType(Kind.LONG, at_least=1),
    "flush.ms": ConfigType(Kind.LONG, at_least=0),
    "follower.replication.throttled.replicas": ConfigType(Kind.LIST),
    "index.interval.bytes": ConfigType(Kind.INT, at_least=0),
    "leader.replication.throttled.replicas": ConfigType(Kind.LIST),
    "local.retention.bytes": ConfigType(Kind.LONG, at_least=-2),
    "local.retention.ms": ConfigType(Kind.LONG, at_least=-2),
    "max.compaction.lag.ms": ConfigType(Kind.LONG, at_least=1),
    "max.message.bytes": ConfigType(Kind.INT, at_least=0),
    "message.downconversion.enable": ConfigType(Kind.BOOLEAN),
    "message.format.version": ConfigType(Kind.STRING),
    "message.timestamp.after.max.ms": ConfigType(Kind.LONG, at_least=0),
    "message.timestamp.before.max.ms": ConfigType(Kind.LONG, at_least=0),
    "message.timestamp.difference.max.ms": ConfigType(Kind.LONG, at_least=0),
    "message.timestamp.type": ConfigType(Kind.STRING, one_of=("CreateTime", "LogAppendTime")),
    "min.cleanable.dirty.ratio": ConfigType(Kind.DOUBLE, at_least=0, at_most=1),
    "min.compaction.lag.ms": ConfigType(Kind.LONG, at_least=0),
    "min.insync.replicas": ConfigType(Kind.INT, at_least=1),
    "preallocate": ConfigType(Kind.BOOLEAN),
    "remote.storage.enable": ConfigType(Kind.BOOLEAN),
    "retention.bytes": ConfigType(Kind.LONG),
    "retention.ms": ConfigType(Kind.LONG, at_least=-1),
    "segment.bytes": ConfigType(Kind.INT, at_least=14),  # LegacyRecord.RECORD_OVERHEAD_V0
    "segment.index.bytes": ConfigType(Kind.INT, at_least=4),
    "segment.jitter.ms": ConfigType(Kind.LONG, at_least=0),
    "segment.ms": ConfigType(Kind.LONG, at_least=1),
    "unclean.leader.election.enable": ConfigType(Kind.BOOLEAN),
}

BROKER_CONFIG_TYPES: dict[str, ConfigType] = {
    "leader.replication.throttled.rate": ConfigType(Kind.LONG, at_least=0),
    "follower.replication.throttled.rate": ConfigType(Kind.LONG, at_least=0),
    "replica.alter.log.dirs.io.max.bytes.per.second": ConfigType(Kind.LONG, at_least=0),
    "unclean.leader.election.enable": ConfigType(Kind.BOOLEAN),
    "min.insync.replicas": ConfigType(Kind.INT, at_least=1),
}


def _invalid(name: str, value: str, why: str) -> str:
    return f"Invalid value {value} for configuration {name}: {why}"


def _number(kind: Kind, text: str) -> float | None:
    """``text`` parsed as Java's Integer/Long/Double.parseDouble would (None: not a number)."""
    if kind is Kind.DOUBLE:
        if not text.isascii() or _DOUBLE.fullmatch(text) is None:
            return None
        number = float(text)
        return number if math.isfinite(number) else None
    if not text.isascii() or _INTEGER.fullmatch(text) is None:
        return None
    low, high = (INT32_MIN, INT32_MAX) if kind is Kind.INT else (INT64_MIN, INT64_MAX)
    integer = int(text)
    return integer if low <= integer <= high else None


def typed_value_problem(config_type: ConfigType, name: str, value: str) -> str | None:
    """Why ``value`` does not parse as ``config_type`` (Kafka's ConfigDef message), or None."""
    text = value.strip()
    kind = config_type.kind
    if kind is Kind.BOOLEAN:
        if text.lower() not in ("true", "false"):
            return _invalid(name, value, "Expected value to be either true or false")
        return None
    if kind in (Kind.INT, Kind.LONG, Kind.DOUBLE):
        number = _number(kind, text)
        if number is None:
            return _invalid(name, value, f"Not a number of type {kind.value}")
        if config_type.at_least is not None and number < config_type.at_least:
            return _invalid(name, value, f"Value must be at least {_bound(config_type.at_least)}")
        if config_type.at_most is not None and number > config_type.at_most:
            return _invalid(name, value, f"Value must be no more than {_bound(config_type.at_most)}")
        return None
    if not config_type.one_of:
        return None
    items = [text] if kind is Kind.STRING else [v.strip() for v in text.split(",") if v.strip()]
    for item in items:
        if item not in config_type.one_of:
            return _invalid(name, item, f"String must be one of: {', '.join(config_type.one_of)}")
    return None


def _bound(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)
