"""``reassignd admin elect``'s command line, shaped like Kafka's ``kafka-leader-election.sh``.

``reassignd admin elect --election-type preferred|unclean (--all-topic-partitions |
--topic T --partition P | --path-to-json-file FILE)`` with the connection flags every admin
client shares (:mod:`reassignd.config` merges them with ``REASSIGND_*`` and the ``[admin]``
table). The election type and the partitions are per run: command line only. The JSON file is
Kafka's (``{"partitions": [{"topic": "t", "partition": 0}]}``), read and checked here, so a file
the tool would refuse is a bad argument (exit 2), like a bad flag.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reassignd.admin.connection import optional_str
from reassignd.admin.settings import REQUEST_TIMEOUT_S
from reassignd.int_limits import INT32_MAX
from reassignd.log_setup import LogSettings
from reassignd.strict_json import Reader, StrictJsonError, loads
from reassignd.topic_partition import TopicPartition

DESCRIPTION = "Elect leaders, like kafka-leader-election: preferred replicas, or unclean elections."
EPILOG = (
    "The election type and the partitions are command-line only; the other flags also read "
    "REASSIGND_<FLAG> and the --config file (top level or an [admin] table). Exit codes: 0 every "
    "partition elected or led by a valid replica already, 1 a partition could not be elected or "
    "the request failed, 2 bad arguments or JSON file."
)
ELECTION_TYPES = ("preferred", "unclean")
JSON_FILE_HELP = 'the partitions: {"partitions": [{"topic": "t", "partition": 0}, ...]} (Kafka\'s format)'


class ElectFileError(ValueError):
    """A JSON file the tool refuses, with a one-line reason."""


@dataclass(frozen=True, slots=True)
class ElectSettings:
    election_type: str  # "preferred" or "unclean"
    partitions: tuple[TopicPartition, ...] | None  # None: every partition
    bootstrap_controller: str  # "http://host:port", no trailing slash
    auth_token: str | None = None
    request_timeout_s: float = REQUEST_TIMEOUT_S

    @property
    def body(self) -> dict[str, Any]:
        """The ``POST /v1/elections`` body."""
        partitions = (
            None if self.partitions is None else [{"topic": t, "partition": p} for t, p in self.partitions]
        )
        return {"election_type": self.election_type, "partitions": partitions}


@dataclass(frozen=True, slots=True)
class AdminElectCommand:
    """``reassignd admin elect``: a one-shot client, not a service."""

    settings: ElectSettings
    log: LogSettings = field(default_factory=lambda: LogSettings(level="warning"))


def add_elect_arguments(elect: argparse.ArgumentParser) -> None:
    """``elect``'s command-line-only arguments: the election type and the partitions."""
    elect.add_argument(
        "--election-type",
        metavar="TYPE",
        required=True,
        help="preferred: each partition's first replica leads, when it is live and in the ISR; "
        "unclean: a partition without a live leader gets a live replica, in the ISR or not",
    )
    which = elect.add_mutually_exclusive_group(required=True)
    which.add_argument("--all-topic-partitions", action="store_true", help="every partition of the cluster")
    which.add_argument("--topic", metavar="TOPIC", help="one topic's partition (with --partition)")
    which.add_argument("--path-to-json-file", metavar="FILE", help=JSON_FILE_HELP)
    elect.add_argument("--partition", metavar="P", help="the partition of --topic")


def parse_elect_file(data: bytes) -> tuple[TopicPartition, ...]:
    """Kafka's election JSON: each partition once (a partition listed twice is refused, as
    Kafka's tool refuses it); other members are ignored, as Kafka's tool ignores them."""
    read = Reader(ElectFileError, "the JSON file")
    try:
        doc = loads(data, "the JSON file")
    except StrictJsonError as e:
        raise ElectFileError(e.reason) from None
    obj = read.obj(doc, "", ("partitions",), None)  # other members ignored, as Kafka's tool does
    found: dict[TopicPartition, None] = {}
    for i, raw in enumerate(read.array(obj["partitions"], "partitions")):
        item = read.obj(raw, f"partitions[{i}]", ("topic", "partition"), None)
        tp = (
            read.text(item["topic"], f"partitions[{i}].topic"),
            read.integer(item["partition"], f"partitions[{i}].partition", 0, INT32_MAX),
        )
        if tp in found:
            raise ElectFileError(f"partitions[{i}]: {tp[0]}-{tp[1]} is listed more than once")
        found[tp] = None
    if not found:
        raise ElectFileError("partitions: no partition listed")
    return tuple(found)


def read_elect_file(path: str) -> tuple[TopicPartition, ...]:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read --path-to-json-file {path}: {e.strerror or e}") from None
    try:
        return parse_elect_file(data)
    except ElectFileError as e:
        raise ValueError(f"{path}: {e}") from None


def elect_settings(
    arguments: Mapping[str, object],
    values: Mapping[str, object],
    read_file: Callable[[str], tuple[TopicPartition, ...]] | None = None,
) -> ElectSettings:
    """The run's own ``arguments`` (election type, partitions; keyed by flag name) and the merged
    connection ``values``, checked; the JSON file read (by ``read_file``, :func:`read_elect_file`
    unless given). ValueError with a one-line reason for anything unusable."""
    raw_type = str(arguments.get("election-type", "")).strip().lower()
    if raw_type not in ELECTION_TYPES:
        raise ValueError(
            f"--election-type: expected preferred or unclean, got {arguments.get('election-type')!r}"
        )
    topic, partition = arguments.get("topic"), arguments.get("partition")
    path = arguments.get("path-to-json-file")
    if (topic is None) != (partition is None):
        raise ValueError("--topic and --partition go together")
    partitions: tuple[TopicPartition, ...] | None = None
    if topic is not None:
        text = str(partition)
        if not text.isdigit() or int(text) > INT32_MAX:
            raise ValueError(f"--partition: expected a partition number, got {text!r}")
        if not str(topic):
            raise ValueError("--topic: expected a topic name")
        partitions = ((str(topic), int(text)),)
    elif path is not None:
        partitions = (read_file or read_elect_file)(str(path))
    elif arguments.get("all-topic-partitions") is not True:
        raise ValueError("choose --all-topic-partitions, --topic with --partition, or --path-to-json-file")
    bootstrap = optional_str(values, "bootstrap-controller")
    if bootstrap is None:
        raise ValueError(
            "elect needs --bootstrap-controller URL (or REASSIGND_BOOTSTRAP_CONTROLLER), the controller's HTTP API"
        )
    timeout = values["request-timeout-s"]
    assert isinstance(timeout, int | float)
    return ElectSettings(
        election_type=raw_type,
        partitions=partitions,
        bootstrap_controller=bootstrap,
        auth_token=optional_str(values, "auth-token"),
        request_timeout_s=float(timeout),
    )
