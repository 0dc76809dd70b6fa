"""reassignd's error hierarchy: every error carries its Kafka code; one table maps codes to names.
And the one error a daemon that cannot start raises (:class:`StartupError`)."""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator

from reassignd.int_limits import INT16_MAX, INT16_MIN

ERROR_NAMES: dict[int, str] = {
    -1: "UNKNOWN_SERVER_ERROR",
    0: "NONE",
    3: "UNKNOWN_TOPIC_OR_PARTITION",
    5: "LEADER_NOT_AVAILABLE",
    7: "REQUEST_TIMED_OUT",
    9: "REPLICA_NOT_AVAILABLE",
    11: "STALE_CONTROLLER_EPOCH",
    17: "INVALID_TOPIC_EXCEPTION",
    29: "TOPIC_AUTHORIZATION_FAILED",
    31: "CLUSTER_AUTHORIZATION_FAILED",
    36: "TOPIC_ALREADY_EXISTS",
    37: "INVALID_PARTITIONS",
    38: "INVALID_REPLICATION_FACTOR",
    39: "INVALID_REPLICA_ASSIGNMENT",
    40: "INVALID_CONFIG",
    41: "NOT_CONTROLLER",
    42: "INVALID_REQUEST",
    56: "KAFKA_STORAGE_ERROR",
    57: "LOG_DIR_NOT_FOUND",
    58: "SASL_AUTHENTICATION_FAILED",
    60: "REASSIGNMENT_IN_PROGRESS",
    77: "STALE_BROKER_EPOCH",
    80: "PREFERRED_LEADER_NOT_AVAILABLE",
    83: "ELIGIBLE_LEADERS_NOT_AVAILABLE",
    84: "ELECTION_NOT_NEEDED",
    85: "NO_REASSIGNMENT_IN_PROGRESS",
    89: "THROTTLING_QUOTA_EXCEEDED",
    10001: "REASSIGNMENT_CANCEL_IN_PLACE",
    10002: "STALE_PLAN",
    10003: "BATCH_CONFLICT",
    10004: "BATCH_ID_IN_USE",
}

DEFAULT_MESSAGES: dict[int, str] = {
    3: "The partition does not exist.",
    7: "The request timed out.",
    41: "This is not the correct controller for this cluster.",
    80: "The preferred leader was not available.",
    83: "Eligible topic partition leaders are not available.",
    84: "Leader election not needed for topic partition.",
    85: "No partition reassignment is in progress.",
    89: "The throttling quota has been exceeded.",
    10001: "A reassignment cancellation (/admin/reassign_cancel) is in place; no new reassignment starts.",
}


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, "UNKNOWN_SERVER_ERROR")


class ReassigndError(Exception):
    """Base of every error that answers a client; ``error_code`` is Kafka's (or ours, ≥ 10000)."""

    error_code: int = -1

    def __init__(self, message: str | None = None, *, error_code: int | None = None) -> None:
        if error_code is not None:
            self.error_code = error_code
        self.message = message if message is not None else DEFAULT_MESSAGES.get(self.error_code)
        super().__init__(self.message or error_name(self.error_code))

    @property
    def error_name(self) -> str:
        return error_name(self.error_code)

    def to_json(self) -> dict[str, object]:
        return {"error_code": self.error_code, "error_name": self.error_name, "error_message": self.message}


class InvalidConfig(ReassigndError):
    error_code = 40


class NotController(ReassigndError):
    error_code = 41


class InvalidRequest(ReassigndError):
    error_code = 42


class UnknownBroker(InvalidRequest):
    """No broker has this id: none is registered and no replica names it (HTTP 404)."""


class UnknownTopicOrPartition(ReassigndError):
    error_code = 3


class InvalidReplicaAssignment(ReassigndError):
    error_code = 39


class NoReassignmentInProgress(ReassigndError):
    error_code = 85


class ClusterAuthorizationFailed(ReassigndError):
    error_code = 31


class RequestTimedOut(ReassigndError):
    error_code = 7


class TopicAlreadyExists(ReassigndError):
    error_code = 36


class InvalidTopic(ReassigndError):
    error_code = 17


class InvalidPartitions(ReassigndError):
    error_code = 37


class InvalidReplicationFactor(ReassigndError):
    error_code = 38


class ReassignmentInProgress(ReassigndError):
    error_code = 60


class ThrottlingQuotaExceeded(ReassigndError):
    error_code = 89


class ReassignmentCancelInPlace(ReassigndError):
    """reassignd's own (KIP-236): /admin/reassign_cancel exists, so no new reassignment starts."""

    error_code = 10001


class EventRefused(ReassigndError):
    """The controller met a failure that would repeat on every attempt (a deterministic failure:
    a znode over ZooKeeper's limit, a node missing that must exist, an undecodable input) while
    applying the request; it refused the request and stays active (UNKNOWN_SERVER_ERROR, as
    Kafka answers an unexpected failure of one request)."""

    error_code = -1


# Kafka's error fields are INT16 and its clients know only Kafka's codes: on the Kafka wire each of
# reassignd's own codes (>= 10000) goes out as the nearest Kafka code (the message keeps the
# detail). The one table; docs/kafka-api.md lists it.
KAFKA_WIRE_CODES: dict[int, int] = {
    10001: 60,  # REASSIGNMENT_CANCEL_IN_PLACE -> REASSIGNMENT_IN_PROGRESS (no new move starts)
    10002: 42,  # STALE_PLAN -> INVALID_REQUEST (the plan no longer matches the cluster)
    10003: 60,  # BATCH_CONFLICT -> REASSIGNMENT_IN_PROGRESS (the partition is already moving)
    10004: 42,  # BATCH_ID_IN_USE -> INVALID_REQUEST
}


def kafka_wire_code(code: int) -> int:
    """The code a Kafka client is sent for ``code``: Kafka's own unchanged, ours mapped, anything
    else that does not fit Kafka's table UNKNOWN_SERVER_ERROR (-1)."""
    if code in KAFKA_WIRE_CODES:
        return KAFKA_WIRE_CODES[code]
    if code >= 10000 or not INT16_MIN <= code <= INT16_MAX:
        return -1
    return code


class StartupError(Exception):
    """A daemon could not start (a port in use, ZooKeeper unreachable, a listener's file): the
    message is one line naming what and why; the CLI prints it and exits 2, without a traceback
    unless ``--log-level debug``. Raised through :func:`starting`, found by :func:`startup_error`."""


@contextlib.contextmanager
def starting(what: str, *kinds: type[Exception]) -> Iterator[None]:
    """Turn an ``OSError`` (a bind, a file) or one of ``kinds`` raised while ``what`` starts into
    a :class:`StartupError` ``"<what>: <why>"``."""
    caught: tuple[type[Exception], ...] = (OSError, *kinds)
    try:
        yield
    except StartupError:
        raise  # already one line (ZooKeeper refusing the credentials: reassignd.zk.errors)
    except caught as e:
        raise StartupError(f"{what}: {_why(e)}") from e


def _why(e: Exception) -> str:
    if isinstance(e, OSError) and e.errno == errno.EADDRINUSE:
        return "address already in use"
    if isinstance(e, OSError) and e.errno == errno.EADDRNOTAVAIL:
        return "address not available on this machine"
    text = (e.strerror if isinstance(e, OSError) and e.strerror else str(e)) or type(e).__name__
    return text.splitlines()[0]


def startup_error(e: BaseException) -> StartupError | None:
    """The :class:`StartupError` behind ``e``: itself, or the first one in an exception group
    (agents and listeners start in task groups); None when ``e`` is something else."""
    if isinstance(e, StartupError):
        return e
    if isinstance(e, BaseExceptionGroup):
        for inner in e.exceptions:
            found = startup_error(inner)
            if found is not None:
                return found
    return None
