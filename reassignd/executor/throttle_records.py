"""The throttle values a batch replaced, as znodes of its journal, and back. Pure.

Before a batch first sets a throttle key on a broker or a topic it records the value it found
(``lifecycle.throttles_recorded``); that record is what it restores. Records live outside the
head — a topic's ``leader.replication.throttled.replicas`` may be long and a batch may touch
thousands of topics, so copying them into the head could take it past ZooKeeper's 1 MiB — in
``throttles_<k>_<generation>`` znodes of at most CHUNK_BUDGET_BYTES each, brokers (by id) then
topics (by name) packed in order::

    {"version":1,"index":0,"brokers":{"4":{"leader.replication.throttled.rate":null}},
     "topics":{"orders":{"leader.replication.throttled.replicas":"0:1"}}}

A record too large for a znode of its own is never made (:func:`record_fits`: the batch then
leaves that entity alone). Read back, a record that cannot be used (a broker key that is no broker
id, a value that is no string) is left out with a line saying why, and the others are kept: the
batch cannot restore that one entity, and says so, but runs on.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from reassignd.executor.model import ThrottleValues
from reassignd.executor.znode_size import CHUNK_BUDGET_BYTES, checked
from reassignd.int_limits import INT32_MAX
from reassignd.zk.json_fields import (
    CodecError,
    compact_json,
    field_name,
    get_field,
    load_object,
    quote,
    read_int,
    read_object,
    read_str,
    read_version,
)

_BROKER_KEY = re.compile(r"0|[1-9][0-9]{0,9}")
# '{"version":1,"index":999999,"brokers":{},"topics":{}}' and then some
_BASE_BYTES = 64


@dataclass(frozen=True, slots=True)
class ThrottleRecords:
    brokers: Mapping[int, ThrottleValues] = field(default_factory=dict)
    topics: Mapping[str, ThrottleValues] = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # records left out, each with why


def _entry_bytes(key: str, values: ThrottleValues) -> int:
    return len(compact_json({key: dict(values)}))  # the entry, its braces standing for its comma


def record_fits(key: str | int, values: ThrottleValues) -> bool:
    """Whether the record of one broker or topic fits in a throttle records znode."""
    return _BASE_BYTES + _entry_bytes(str(key), values) <= CHUNK_BUDGET_BYTES


def encode_records(
    brokers: Mapping[int, ThrottleValues], topics: Mapping[str, ThrottleValues]
) -> tuple[bytes, ...]:
    """The records as znodes of at most CHUNK_BUDGET_BYTES each (none when there is no record).
    A record that does not fit alone raises JournalTooLarge (never made: record_fits)."""
    entries = [("brokers", str(b), brokers[b]) for b in sorted(brokers)]
    entries += [("topics", t, topics[t]) for t in sorted(topics)]
    groups: list[dict[str, dict[str, object]]] = []
    size = CHUNK_BUDGET_BYTES + 1
    for kind, key, values in entries:
        cost = _entry_bytes(key, values)
        if size + cost > CHUNK_BUDGET_BYTES:
            groups.append({"brokers": {}, "topics": {}})
            size = _BASE_BYTES
        groups[-1][kind][key] = dict(values)
        size += cost
    return tuple(
        checked(
            f"batch journal throttle records {i}",
            {"version": 1, "index": i, **group},
            functools.partial(decode_records, index=i),
        )
        for i, group in enumerate(groups)
    )


def decode_records(data: bytes | None, index: int) -> ThrottleRecords:
    """The records of one znode; CodecError when the znode as a whole cannot be read."""
    obj = load_object(data)
    read_version(obj, (1,))
    if (found := read_int(get_field(obj, "index"), "index")) != index:
        raise CodecError(f"field 'index' is {found}, expected {index}")
    return read_records(obj, "")


def read_records(obj: Mapping[str, object], prefix: str) -> ThrottleRecords:
    """``brokers`` and ``topics`` of ``obj`` (a throttle records znode, or a version 1 head's
    ``throttles``, then ``prefix`` is ``"throttles."``), each record that cannot be used left out."""
    problems: list[str] = []
    brokers: dict[int, ThrottleValues] = {}
    for key, values in _records(obj, prefix + "brokers", problems).items():
        if not _BROKER_KEY.fullmatch(key) or int(key) > INT32_MAX:
            problems.append(f"field '{prefix}brokers' has key {quote(key)}, which is not a broker id")
        else:
            brokers[int(key)] = values
    topics = _records(obj, prefix + "topics", problems)
    return ThrottleRecords(brokers, topics, tuple(problems))


def _records(obj: Mapping[str, object], where: str, problems: list[str]) -> dict[str, ThrottleValues]:
    name = where.rsplit(".", 1)[-1]
    value = get_field(obj, name, where[: -len(name)])
    out: dict[str, ThrottleValues] = {}
    for key, configs in read_object(value, where).items():
        at = field_name(where, key)
        try:
            out[key] = {
                config: None if v is None else read_str(v, field_name(at, config))
                for config, v in read_object(configs, at).items()
            }
        except CodecError as e:
            problems.append(e.reason)
    return out
