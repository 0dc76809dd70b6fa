"""The ``kafka-reassign-partitions`` plan format: the one reader of every way a plan comes in. Pure.

A plan is ``{"version":1,"partitions":[{"topic","partition","replicas"[,"log_dirs"]}]}``. It
reaches reassignd three ways, and all three read it with :func:`parse_plan`, so a plan is
accepted or refused the same way whichever way it came (but for an integral number written
``1.0``: the file and the body are given to the reader with it written ``1``, as the HTTP door
takes it, :func:`reassignd.http.door.integral_numbers`; the znode is Kafka's, whose controller
refuses it, and so does this reader):

- ``reassignd admin reassign --execute`` (and ``--additional``) reads a plan file;
- ``POST /v1/reassignments`` takes a plan as its body;
- the legacy znode ``/admin/reassign_partitions`` (and ``_extra``) holds one, whose entries may
  also carry ``original_replicas`` (KIP-236: the replicas before the move, for a rollback; read
  with ``origins=True``).

The rules are Kafka's tool's, decided once:

- ``version`` defaults to 1 when absent (Kafka's ``EarliestVersion``); any other value is refused.
- Unknown fields are ignored, at every level, as Kafka's tool ignores them.
- What makes the plan itself wrong refuses all of it, with a one-line reason that names the
  offending field: JSON that is not strict (:mod:`reassignd.strict_json`), a wrong type, an empty
  plan, an empty or repeated replica list entry, a broker or partition id outside 0..2^31-1, an
  illegal topic name, ``log_dirs`` of another length than ``replicas``, a partition given twice.
  Kafka's tool refuses these before it sends anything; reassignd refuses them the same way at
  the controller's doors too, so one bad line never half-applies a plan.

Two tiers read a plan's bytes (:func:`parse_plan`): msgspec decodes them into the plan's contract
struct (:class:`reassignd.contracts.requests.ReassignmentPlan`) and :func:`typed_plan` checks what
the struct does not state (a legal topic name, replicas each once, ``log_dirs`` as long as
``replicas``, each partition once); whatever it does not accept at once (a refusal, an unknown or
repeated key, the KIP-236 field) is read again by the strict reader (:func:`strict_plan`), which
decides and words the refusal. Both tiers accept exactly the same plans
(``tests/unit/test_plan_tiers.py``).

What depends on the cluster (an unknown topic or partition, a broker that is not alive, a topic
being deleted) is the controller's to refuse, per partition, with Kafka's error codes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NoReturn

import msgspec

from reassignd import strict_json
from reassignd.contracts.requests import ReassignmentPlan
from reassignd.int_limits import INT32_MAX
from reassignd.strict_json import is_int, json_type
from reassignd.topic_partition import Replicas, TopicPartition, topic_name_problem

PLAN_VERSION = 1  # the only version kafka-reassign-partitions knows
ANY_LOG_DIR = "any"


class PlanError(ValueError):
    """A plan that cannot be used; ``str(error)`` is a one-line reason: ``path: message``, or the
    message alone when it is about the whole plan (``path`` empty)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


@dataclass(frozen=True, slots=True)
class PlanEntry:
    topic: str
    partition: int
    replicas: Replicas
    log_dirs: tuple[str, ...]  # one per replica; "any" unless the plan says otherwise
    original_replicas: Replicas | None = None  # KIP-236, the legacy znode only

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class Plan:
    entries: tuple[PlanEntry, ...]  # in the file's order, each partition once

    @property
    def partitions(self) -> list[TopicPartition]:
        """The plan's partitions, sorted by topic then partition."""
        return sorted(e.tp for e in self.entries)

    @property
    def targets(self) -> dict[TopicPartition, Replicas]:
        return {e.tp: e.replicas for e in self.entries}

    @property
    def topics(self) -> list[str]:
        return sorted({e.topic for e in self.entries})

    @property
    def pins_log_dirs(self) -> bool:
        """True when some replica names a log directory other than "any"."""
        return any(d != ANY_LOG_DIR for e in self.entries for d in e.log_dirs)


def tp_text(tp: TopicPartition) -> str:
    """Kafka's ``TopicPartition.toString``: ``orders-0``."""
    return f"{tp[0]}-{tp[1]}"


def ids_text(ids: Iterable[int]) -> str:
    """Broker ids as Kafka's tool joins them: ``4,5,6``."""
    return ",".join(str(i) for i in ids)


class _PlanReader(strict_json.Reader):
    """The one strict-reader family, raising :class:`PlanError` (its path kept apart)."""

    __slots__ = ()

    def fail(self, path: str, message: str) -> NoReturn:
        raise PlanError(path, message)


_READ = _PlanReader(ValueError, "")
_fail = _READ.fail


def _field(obj: Mapping[str, object], key: str, path: str) -> object:
    if key not in obj:
        _fail(path, f"missing required field {key!r}")
    return obj[key]


def _id(value: object, path: str) -> int:
    if not is_int(value):
        _READ.wrong_type(path, "a non-negative integer", value)
    assert isinstance(value, int)
    if not 0 <= value <= INT32_MAX:
        _fail(path, f"expected a non-negative integer up to {INT32_MAX}, got {value}")
    return value


def _broker_ids(value: object, path: str) -> Replicas:
    if not isinstance(value, list):
        _READ.wrong_type(path, "a list of broker ids", value)
    return tuple(_id(item, f"{path}[{i}]") for i, item in enumerate(value))


def _log_dirs(value: object, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        _READ.wrong_type(path, "a list of strings", value)
    return _READ.texts(value, path)


def _entry(raw: object, path: str, origins: bool) -> PlanEntry:
    obj = _READ.mapping(raw, path)
    topic = _READ.text(_field(obj, "topic", path), f"{path}.topic")
    if (problem := topic_name_problem(topic)) is not None:
        _fail(f"{path}.topic", problem)
    partition = _id(_field(obj, "partition", path), f"{path}.partition")
    replicas = _broker_ids(_field(obj, "replicas", path), f"{path}.replicas")
    tp = tp_text((topic, partition))
    if not replicas:
        _fail(f"{path}.replicas", f"Partition replica list cannot be empty (partition {tp})")
    if repeated := sorted(r for r, n in Counter(replicas).items() if n > 1):
        _fail(
            f"{path}.replicas",
            f"Partition replica lists may not contain duplicate entries: {tp} contains multiple "
            f"entries for {ids_text(repeated)}",
        )
    log_dirs = (ANY_LOG_DIR,) * len(replicas)
    if "log_dirs" in obj:
        log_dirs = _log_dirs(obj["log_dirs"], f"{path}.log_dirs")
        if len(log_dirs) != len(replicas):
            _fail(
                f"{path}.log_dirs",
                f"Size of replicas list {list(replicas)} is different from size of log dirs list "
                f"{list(log_dirs)} for partition {tp}",
            )
    original = None
    if origins and obj.get("original_replicas") is not None:
        original = _broker_ids(obj["original_replicas"], f"{path}.original_replicas")
    return PlanEntry(topic, partition, replicas, log_dirs, original)


def parse_plan(data: bytes | str, *, origins: bool = False) -> Plan:
    """A validated plan, or :class:`PlanError` with a one-line reason. ``origins``: also read
    each entry's ``original_replicas`` (the legacy znode's KIP-236 field). The typed tier first,
    the strict reader when it gives up."""
    raw = data.encode() if isinstance(data, str) else data
    if not origins and (plan := typed_plan(raw)) is not None:
        return plan
    return strict_plan(raw, origins=origins)


# the top object's first member is "version" (as Kafka's tool and msgspec write a plan): a member
# the decoded struct cannot prove present, since it holds the default's value
_VERSION_FIRST = re.compile(rb'[ \t\r\n]*\{[ \t\r\n]*"version"[ \t\r\n]*:')


def typed_plan(data: bytes) -> Plan | None:
    """The typed tier: the plan in ``data`` when msgspec decodes it into its contract struct and
    nothing in it needs the strict reader; None otherwise (the strict reader decides).

    A repeated key (msgspec keeps the last; the strict reader refuses it) is ruled out by counting:
    each object member is written with one ``:`` outside strings, so when the colons equal the
    members the struct proves present, no key was repeated and none was unknown."""
    try:
        value = msgspec.json.decode(data, type=ReassignmentPlan)
    except (msgspec.MsgspecError, UnicodeDecodeError):
        return None
    members = 1 + (_VERSION_FIRST.match(data) is not None)
    entries: list[PlanEntry] = []
    for p in value.partitions:
        replicas = p.replicas
        if topic_name_problem(p.topic) is not None or len(set(replicas)) != len(replicas):
            return None
        if isinstance(p.log_dirs, tuple):
            if len(p.log_dirs) != len(replicas):
                return None
            log_dirs, members = p.log_dirs, members + 4
        else:
            log_dirs, members = (ANY_LOG_DIR,) * len(replicas), members + 3
        entries.append(PlanEntry(p.topic, p.partition, replicas, log_dirs))
    if data.count(b":") != members or len({(p.topic, p.partition) for p in value.partitions}) != len(entries):
        return None
    return Plan(tuple(entries))


def strict_plan(data: bytes | str, *, origins: bool = False) -> Plan:
    """The strict reader: :func:`parse_plan`'s decision and its refusals' words."""
    try:
        doc = strict_json.loads(data.encode() if isinstance(data, str) else data, "the plan")
    except strict_json.StrictJsonError as e:
        raise PlanError("", e.reason) from None
    return read_plan(doc, origins=origins)


def read_plan(doc: object, *, origins: bool = False) -> Plan:
    """:func:`parse_plan` of JSON already read by :func:`reassignd.strict_json.loads` (or a reader
    that refuses what it refuses, as the ZooKeeper codecs' fast path does)."""
    if not isinstance(doc, dict):
        _fail("", f'expected a JSON object {{"version": 1, "partitions": [...]}}, got {json_type(doc)}')
    version = doc.get("version", PLAN_VERSION)  # Kafka's EarliestVersion when absent
    if not is_int(version):
        _READ.wrong_type("version", "an integer", version)
    if version != PLAN_VERSION:
        _fail("version", f"Not supported version field value {version} (only {PLAN_VERSION} exists)")
    raw = _READ.array(_field(doc, "partitions", ""), "partitions")
    if not raw:
        _fail("partitions", "Partition reassignment list cannot be empty")
    entries = tuple(_entry(item, f"partitions[{i}]", origins) for i, item in enumerate(raw))
    if repeated := sorted(tp for tp, n in Counter(e.tp for e in entries).items() if n > 1):
        _fail(
            "",
            "Partition reassignment contains duplicate topic partitions: "
            + ",".join(tp_text(tp) for tp in repeated),
        )
    return Plan(entries)
