"""What ``reassignd admin reassign`` was asked to do: one frozen value built at the edge. Pure.

The verbs are Kafka's ``kafka-reassign-partitions`` actions (exactly one per run) plus KIP-236's
three ZooKeeper verbs. The HTTP verbs talk to a controller (``--bootstrap-controller``); the
KIP-236 verbs write znodes (``--zk``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from urllib.parse import urlsplit

from reassignd.plan_format import Plan
from reassignd.tls import SYSTEM_CAS, ClientTls
from reassignd.zk import paths
from reassignd.zk.security import NO_SECURITY, ZkSecurity


class Verb(enum.Enum):
    EXECUTE = "execute"
    VERIFY = "verify"
    LIST = "list"
    CANCEL = "cancel"
    CANCEL_ALL = "cancel-all"
    ROLLBACK = "rollback"
    REMOVE_CANCEL = "remove-cancel"
    ADDITIONAL = "additional"

    @property
    def flag(self) -> str:
        return f"--{self.value}"


@dataclass(frozen=True, slots=True)
class VerbSpec:
    verb: Verb
    help: str
    needs_plan: bool  # --reassignment-json-file
    via_zk: bool  # writes znodes (--zk) rather than calling the HTTP API (--bootstrap-controller)


VERBS: tuple[VerbSpec, ...] = (
    VerbSpec(
        Verb.EXECUTE,
        "start the reassignments of --reassignment-json-file (after printing the current "
        "assignment as a rollback plan)",
        needs_plan=True,
        via_zk=False,
    ),
    VerbSpec(
        Verb.VERIFY,
        "tell, per partition of --reassignment-json-file, whether its reassignment is complete",
        needs_plan=True,
        via_zk=False,
    ),
    VerbSpec(
        Verb.LIST, "list the reassignments in flight, with their progress", needs_plan=False, via_zk=False
    ),
    VerbSpec(
        Verb.CANCEL,
        "cancel the reassignments of the partitions of --reassignment-json-file (back to their "
        "original replicas)",
        needs_plan=True,
        via_zk=False,
    ),
    VerbSpec(Verb.CANCEL_ALL, "cancel every reassignment in flight", needs_plan=False, via_zk=False),
    VerbSpec(
        Verb.ROLLBACK,
        f"KIP-236: create {paths.REASSIGN_CANCEL}: the controller rolls every pending legacy "
        "reassignment back to its original replicas and refuses new ones until --remove-cancel",
        needs_plan=False,
        via_zk=True,
    ),
    VerbSpec(Verb.REMOVE_CANCEL, f"KIP-236: delete {paths.REASSIGN_CANCEL}", needs_plan=False, via_zk=True),
    VerbSpec(
        Verb.ADDITIONAL,
        f"KIP-236: submit --reassignment-json-file through ZooKeeper: {paths.REASSIGN_PARTITIONS} "
        f"when absent, else {paths.REASSIGN_PARTITIONS_EXTRA} (more reassignments while others are "
        "in flight)",
        needs_plan=True,
        via_zk=True,
    ),
)

SPECS: dict[Verb, VerbSpec] = {spec.verb: spec for spec in VERBS}

REQUEST_TIMEOUT_S = 60.0
LOG_DIR_TIMEOUT_MS = 10_000  # Kafka's --timeout default


@dataclass(frozen=True, slots=True)
class ReassignSettings:
    verb: Verb
    plan: Plan | None = None  # parsed and validated; present exactly when the verb needs one
    plan_path: str | None = None
    bootstrap_controller: str | None = None  # "http://host:port", no trailing slash
    zk_connect: str | None = None
    zk_security: ZkSecurity = NO_SECURITY  # SASL and ACLs of the ZooKeeper verbs
    auth_token: str | None = None
    request_timeout_s: float = REQUEST_TIMEOUT_S
    tls: ClientTls = SYSTEM_CAS  # how an https:// controller is verified
    # --execute: how long a plan's log_dirs moves are asked again until their replicas reach
    # their brokers (Kafka's --timeout)
    log_dir_timeout_ms: int = LOG_DIR_TIMEOUT_MS


BOOTSTRAP_HELP = (
    "HTTP API of a controller, e.g. http://127.0.0.1:8080 (any instance: the active one is found)"
)
TIMEOUT_HELP = "timeout of each HTTP or ZooKeeper request, seconds"


def parse_controller_url(value: object) -> str:
    """``http://host:port`` (or https); a bare ``host:port`` means http. No path, query or user."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a URL, got {value!r}")
    text = value.strip()
    parts = urlsplit(text if "://" in text else "http://" + text)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"expected an http:// or https:// URL, got {value!r}")
    try:
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        raise ValueError(f"invalid port in {value!r}") from None
    if not parts.hostname or parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise ValueError(f"expected a base URL like http://127.0.0.1:8080, got {value!r}")
    return f"{parts.scheme}://{parts.netloc}"


def client_tls(ca_file: str | None, cert_file: str | None, key_file: str | None) -> ClientTls:
    """The TLS side of a client of the HTTP API, its files loaded now (ValueError, one line)."""
    tls = ClientTls(ca_file, cert_file, key_file)
    problem = tls.problem()
    if problem is not None:
        raise ValueError(problem)
    return tls


def check_arguments(
    verb: Verb, plan_path: str | None, *, bootstrap_controller: str | None, zk_connect: str | None
) -> None:
    """The flags each verb needs, and the ones it cannot take; ValueError with a one-line reason."""
    spec = SPECS[verb]
    if spec.needs_plan and plan_path is None:
        raise ValueError(f"{verb.flag} needs --reassignment-json-file FILE")
    if not spec.needs_plan and plan_path is not None:
        raise ValueError(f"{verb.flag} takes no --reassignment-json-file")
    if spec.via_zk and zk_connect is None:
        raise ValueError(f"{verb.flag} needs --zk (or REASSIGND_ZK): it writes znodes in ZooKeeper")
    if not spec.via_zk and bootstrap_controller is None:
        raise ValueError(
            f"{verb.flag} needs --bootstrap-controller URL (or REASSIGND_BOOTSTRAP_CONTROLLER), "
            "the controller's HTTP API"
        )
