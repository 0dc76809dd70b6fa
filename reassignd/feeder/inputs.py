"""Reading a cluster and partition sizes from files. Pure (bytes in, values out).

* ``--cluster-file``: ``kafka-topics --describe`` text (brokers are the replicas it names, without
  racks) or our own snapshot JSON: ``{"brokers": [{"id", "rack"}], "topics": [{"name",
  "partitions": [{"partition", "replicas"[, "size_bytes"]}]}]}``, the shapes of the controller's
  ``GET /v1/brokers`` and ``GET /v1/topics/{topic}``.
* ``--sizes``: what ``kafka-log-dirs --describe`` prints (its JSON line; the lines before it are
  skipped), ``{"brokers": [{"broker", "logDirs": [{"partitions": [{"partition": "t-0", "size",
  "isFuture"}]}]}]}``; the controller's ``GET /v1/log-dirs`` in the same shape (snake_case keys
  accepted too). A partition's size is its largest replica's (future replicas not counted).
  The same document gives each replica's log directory and each directory's capacity
  (``totalBytes``, where the broker reports one) for the ``disk`` goal (:func:`parse_dir_places`).
* JBOD in the snapshot JSON: a broker's ``"log_dirs": [{"path", "total_bytes"}]`` and a
  partition's ``"log_dirs"`` (one path per replica, ``"any"`` when not known), as in
  ``kafka-reassign-partitions`` plans.

Every problem is an :class:`InputError` naming the file and the line or JSON path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from reassignd.feeder.model import Cluster, ClusterError, Row, build_cluster, make_row, with_dirs
from reassignd.topic_partition import TopicPartition


class InputError(ValueError):
    """An input that cannot be used; ``str(error)`` is a one-line reason with its place."""


_DESCRIBE = re.compile(
    r"Topic:\s*(?P<topic>\S+)\s+Partition:\s*(?P<partition>\S+)\s.*?Replicas:\s*(?P<replicas>\S*)"
)


def parse_topics_describe(text: str, source: str) -> Cluster:
    """``kafka-topics --describe`` output: one line per partition (the topic lines are skipped)."""
    rows: list[Row] = []
    brokers: set[int] = set()
    for n, line in enumerate(text.splitlines(), 1):
        if "Partition:" not in line or "PartitionCount" in line:
            continue
        m = _DESCRIBE.search(line)
        if m is None:
            raise InputError(
                f"{source}:{n}: expected 'Topic: T Partition: P ... Replicas: B,B', got {line.strip()[:80]!r}"
            )
        try:
            partition = int(m["partition"])
            replicas = [int(b) for b in m["replicas"].split(",") if b]
        except ValueError:
            raise InputError(
                f"{source}:{n}: partition and replicas must be integers, got {line.strip()[:80]!r}"
            ) from None
        brokers.update(replicas)
        rows.append(make_row(m["topic"], partition, replicas))
    if not rows:
        raise InputError(f"{source}: no partition lines ('Topic: T Partition: P ... Replicas: ...') found")
    return _checked(dict.fromkeys(sorted(brokers)), rows, source)


def _checked(
    racks: Mapping[int, str | None], rows: list[Row], source: str, *, allow_offline: bool = False
) -> Cluster:
    try:
        return build_cluster(racks, rows, allow_offline=allow_offline)
    except ClusterError as e:
        raise InputError(f"{source}: {e}") from None


def _json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise InputError(f"{source}: invalid JSON: {e}") from None


def _expect(value: Any, kind: type | tuple[type, ...], path: str, source: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(f"{source}: {path}: expected {_kind_name(kind)}, got {type(value).__name__}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {dict: "an object", list: "an array", str: "a string", int: "an integer"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _int(value: Any, path: str, source: str) -> int:
    number = _expect(value, int, path, source)
    assert isinstance(number, int)
    if number < 0:
        raise InputError(f"{source}: {path}: expected a non-negative integer, got {number}")
    return number


def parse_snapshot(doc: Any, source: str) -> Cluster:
    """Our snapshot JSON (already decoded). Brokers that replicas name but ``brokers`` does not
    list (brokers that are down) are offline: they keep their replicas unless a goal moves them
    off, and receive nothing."""
    _expect(doc, dict, "$", source)
    racks: dict[int, str | None] = {}
    capacity: dict[int, dict[str, int]] = {}
    for i, b in enumerate(_expect(doc.get("brokers"), list, "brokers", source)):
        _expect(b, dict, f"brokers[{i}]", source)
        rack = b.get("rack")
        if rack is not None:
            _expect(rack, str, f"brokers[{i}].rack", source)
        broker_id = _int(b.get("id"), f"brokers[{i}].id", source)
        racks[broker_id] = rack
        for k, d in enumerate(_expect(b.get("log_dirs", []), list, f"brokers[{i}].log_dirs", source)):
            path = f"brokers[{i}].log_dirs[{k}]"
            _expect(d, dict, path, source)
            name = _expect(d.get("path"), str, f"{path}.path", source)
            total = d.get("total_bytes")
            capacity.setdefault(broker_id, {})[name] = (
                0 if total is None or total == -1 else _int(total, f"{path}.total_bytes", source)
            )
    rows: list[Row] = []
    dirs: dict[tuple[str, int, int], str] = {}
    for i, t in enumerate(_expect(doc.get("topics"), list, "topics", source)):
        _expect(t, dict, f"topics[{i}]", source)
        name = _expect(t.get("name"), str, f"topics[{i}].name", source)
        for j, p in enumerate(_expect(t.get("partitions"), list, f"topics[{i}].partitions", source)):
            path = f"topics[{i}].partitions[{j}]"
            _expect(p, dict, path, source)
            replicas = [
                _int(b, f"{path}.replicas[{k}]", source)
                for k, b in enumerate(_expect(p.get("replicas"), list, f"{path}.replicas", source))
            ]
            size = _int(p.get("size_bytes", 0), f"{path}.size_bytes", source)
            number = _int(p.get("partition"), f"{path}.partition", source)
            rows.append(make_row(name, number, replicas, size))
            if "log_dirs" in p:
                paths = _expect(p["log_dirs"], list, f"{path}.log_dirs", source)
                if len(paths) != len(replicas):
                    raise InputError(
                        f"{source}: {path}.log_dirs: {len(paths)} dirs for {len(replicas)} replicas"
                    )
                for k, (b, d) in enumerate(zip(replicas, paths, strict=True)):
                    if _expect(d, str, f"{path}.log_dirs[{k}]", source) != "any":
                        dirs[(name, number, b)] = d
                        capacity.setdefault(b, {}).setdefault(d, 0)
    cluster = _checked(racks, rows, source, allow_offline=True)
    return with_dirs(cluster, dirs, capacity) if dirs or capacity else cluster


def parse_cluster_file(text: str, source: str) -> Cluster:
    """Snapshot JSON when the file starts with ``{``, else ``kafka-topics --describe`` text."""
    if text.lstrip().startswith("{"):
        return parse_snapshot(_json(text, source), source)
    return parse_topics_describe(text, source)


def _split_tp(name: str, path: str, source: str) -> TopicPartition:
    topic, dash, number = name.rpartition("-")
    if not dash or not topic or not number.isdigit():
        raise InputError(f"{source}: {path}: expected TOPIC-PARTITION, got {name[:80]!r}")
    return topic, int(number)


def parse_log_dirs(doc: Any, source: str) -> dict[TopicPartition, int]:
    """Partition sizes from a DescribeLogDirs document (already decoded)."""
    _expect(doc, dict, "$", source)
    sizes: dict[TopicPartition, int] = {}
    for i, b in enumerate(_expect(doc.get("brokers"), list, "brokers", source)):
        _expect(b, dict, f"brokers[{i}]", source)
        dirs = b.get("logDirs", b.get("log_dirs"))
        for j, d in enumerate(_expect(dirs, list, f"brokers[{i}].logDirs", source)):
            _expect(d, dict, f"brokers[{i}].logDirs[{j}]", source)
            for k, p in enumerate(
                _expect(d.get("partitions", []), list, f"brokers[{i}].logDirs[{j}].partitions", source)
            ):
                path = f"brokers[{i}].logDirs[{j}].partitions[{k}]"
                _expect(p, dict, path, source)
                if p.get("isFuture", p.get("is_future", False)) is True:
                    continue
                raw = p.get("partition")
                if isinstance(raw, str):
                    tp = _split_tp(raw, f"{path}.partition", source)
                else:
                    topic = _expect(p.get("topic"), str, f"{path}.topic", source)
                    tp = (topic, _int(raw, f"{path}.partition", source))
                size = _int(p.get("size", p.get("size_bytes")), f"{path}.size", source)
                sizes[tp] = max(size, sizes.get(tp, 0))
    return sizes


def parse_dir_places(
    doc: Any, source: str
) -> tuple[dict[tuple[str, int, int], str], dict[int, dict[str, int]]]:
    """Each replica's log directory, (topic, partition, broker) -> path (a future replica's
    current one), and each broker's directories with their capacity (0: not reported; a dir
    without its ``logDir`` name is left out), from a
    DescribeLogDirs document already checked by :func:`parse_log_dirs`."""
    dirs: dict[tuple[str, int, int], str] = {}
    capacity: dict[int, dict[str, int]] = {}
    for b in doc.get("brokers", []):
        broker_id = b.get("broker")
        if not isinstance(broker_id, int):
            continue
        for d in b.get("logDirs", b.get("log_dirs", [])):
            name = d.get("logDir", d.get("log_dir"))
            if not isinstance(name, str):
                continue  # a dir without its name: its sizes count, its place is not known
            total = d.get("totalBytes", d.get("total_bytes"))
            capacity.setdefault(broker_id, {})[name] = total if isinstance(total, int) and total > 0 else 0
            for p in d.get("partitions", []):
                if p.get("isFuture", p.get("is_future", False)) is True:
                    continue
                raw = p.get("partition")
                tp = _split_tp(raw, "partition", source) if isinstance(raw, str) else (p.get("topic"), raw)
                dirs[(str(tp[0]), int(tp[1]), broker_id)] = name
    return dirs, capacity


def sizes_document(text: str, source: str) -> Any:
    """The DescribeLogDirs document of a ``--sizes`` file (its JSON line after the progress lines)."""
    start = next((i for i, line in enumerate(text.splitlines()) if line.lstrip().startswith("{")), None)
    if start is None:
        raise InputError(f"{source}: no JSON object found (expected the output of kafka-log-dirs --describe)")
    return _json("\n".join(text.splitlines()[start:]), source)


def parse_sizes_file(text: str, source: str) -> dict[TopicPartition, int]:
    """``kafka-log-dirs --describe`` output: the JSON line after its progress lines."""
    return parse_log_dirs(sizes_document(text, source), source)
