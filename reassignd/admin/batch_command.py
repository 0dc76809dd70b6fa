"""``reassignd admin batch``'s command line: its verbs, their arguments and its settings.

``reassignd admin batch submit --batch-file F | list | describe ID | pause ID | resume ID |
stop ID | rollback ID``, each with the connection flags every admin client shares
(:mod:`reassignd.config` merges them with ``REASSIGND_*`` and the ``[admin]`` table). The verb, the
batch file and the id are per run: command line only. The batch file is read and checked here, so
a file the controller would refuse is a bad argument (exit 2), like a bad flag.
"""

from __future__ import annotations

import argparse
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reassignd.admin.batch_file import BatchBody, BatchFileError, parse_batch_file
from reassignd.admin.connection import optional_str, tls_of
from reassignd.admin.settings import REQUEST_TIMEOUT_S
from reassignd.http.batch_requests import batch_id_error
from reassignd.log_setup import LogSettings
from reassignd.tls import SYSTEM_CAS, ClientTls

DESCRIPTION = "Submit, follow and control the controller's batches of moves (the executor)."
EPILOG = (
    "The verb, --batch-file and the batch id are command-line only; the other flags also read "
    "REASSIGND_<FLAG> and the --config file (top level or an [admin] table). Exit codes: 0 done, "
    "2 bad arguments or batch file, 1 a refused partition or a failed request."
)
BATCH_FILE_HELP = (
    "a POST /v1/batches body, a JSON array of them, or a batches.json "
    '({"batches": [<bodies>], ...}, as reassignd feed plan writes it)'
)


class BatchVerb(enum.Enum):
    SUBMIT = "submit"
    LIST = "list"
    DESCRIBE = "describe"
    PAUSE = "pause"
    RESUME = "resume"
    STOP = "stop"
    ROLLBACK = "rollback"

    @property
    def takes_id(self) -> bool:
        return self not in (BatchVerb.SUBMIT, BatchVerb.LIST)

    @property
    def is_control(self) -> bool:
        return self in (BatchVerb.PAUSE, BatchVerb.RESUME, BatchVerb.STOP, BatchVerb.ROLLBACK)


VERB_HELP: dict[BatchVerb, str] = {
    BatchVerb.SUBMIT: "submit the batches of --batch-file, in order",
    BatchVerb.LIST: "list every batch with its state and progress",
    BatchVerb.DESCRIBE: "one batch's status: counts, bytes, rate, moves in flight, stuck moves, throttles",
    BatchVerb.PAUSE: "pause a batch: it starts nothing new (moves in flight go on)",
    BatchVerb.RESUME: "resume a paused batch",
    BatchVerb.STOP: "stop a batch: pending moves dropped, running ones reverted to their original replicas",
    BatchVerb.ROLLBACK: "stop a batch, then move its completed partitions back (a new batch)",
}


@dataclass(frozen=True, slots=True)
class BatchSettings:
    verb: BatchVerb
    bootstrap_controller: str  # "http://host:port", no trailing slash
    batch_id: str | None = None  # the verbs that name a batch
    batch_file: str | None = None  # submit
    bodies: tuple[BatchBody, ...] = ()  # submit: the file's batches, checked
    auth_token: str | None = None
    request_timeout_s: float = REQUEST_TIMEOUT_S
    tls: ClientTls = SYSTEM_CAS  # how an https:// controller is verified


@dataclass(frozen=True, slots=True)
class AdminBatchCommand:
    """``reassignd admin batch``: a one-shot client, not a service."""

    settings: BatchSettings
    log: LogSettings = field(default_factory=lambda: LogSettings(level="warning"))


def add_batch_arguments(verb: BatchVerb) -> Callable[[argparse.ArgumentParser], None]:
    """The command-line-only argument of ``batch <verb>``: the batch file, or the batch's id."""

    def add(parser: argparse.ArgumentParser) -> None:
        if verb is BatchVerb.SUBMIT:
            parser.add_argument("--batch-file", metavar="FILE", required=True, help=BATCH_FILE_HELP)
        elif verb.takes_id:
            parser.add_argument("batch_id", metavar="ID", help="the batch's id")

    return add


def read_batch_file(path: str) -> tuple[BatchBody, ...]:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"cannot read --batch-file {path}: {e.strerror or e}") from None
    try:
        return parse_batch_file(data)
    except BatchFileError as e:
        raise ValueError(f"{path}: {e}") from None


def batch_settings(
    verb: BatchVerb,
    batch_file: str | None,
    batch_id: str | None,
    values: Mapping[str, object],
    read_file: Callable[[str], tuple[BatchBody, ...]] | None = None,
) -> BatchSettings:
    """The merged connection ``values`` (keyed by flag name) and the verb's argument, checked;
    the batch file read (by ``read_file``, :func:`read_batch_file` unless given). ValueError with
    a one-line reason for anything unusable."""
    bootstrap = optional_str(values, "bootstrap-controller")
    if bootstrap is None:
        raise ValueError(
            f"{verb.value} needs --bootstrap-controller URL (or REASSIGND_BOOTSTRAP_CONTROLLER), "
            "the controller's HTTP API"
        )
    if batch_id is not None and (reason := batch_id_error(batch_id)) is not None:
        raise ValueError(f"batch id {batch_id[:80]!r}: {reason}")
    timeout = values["request-timeout-s"]
    assert isinstance(timeout, int | float)
    return BatchSettings(
        verb=verb,
        bootstrap_controller=bootstrap,
        batch_id=batch_id,
        batch_file=batch_file,
        bodies=() if batch_file is None else (read_file or read_batch_file)(batch_file),
        auth_token=optional_str(values, "auth-token"),
        request_timeout_s=float(timeout),
        tls=tls_of(values),
    )
