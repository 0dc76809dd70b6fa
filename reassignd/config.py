"""Command-line configuration: flags, ``REASSIGND_*`` environment variables and an optional TOML
file, merged into one frozen settings object per subcommand.

Precedence: flag > environment > file > default. Every flag ``--some-flag`` has the variable
``REASSIGND_SOME_FLAG`` and the file key ``some-flag`` (or ``some_flag``). File keys sit at the
top level; a ``[controller]``, ``[broker]``, ``[cluster]`` or ``[admin]`` table overrides them for
that subcommand, and keys that belong to another subcommand are ignored, so one file can serve all.
``reassignd admin <client>``'s verb and plan file are per run: command line only.

:func:`resolve` is pure (values in, settings out); :func:`load_command` is the thin shell that
parses ``argv``, reads the file and checks the files settings name. Every problem is a
:class:`ConfigError` with a one-line reason (the CLI exits 2 with it).
"""

from __future__ import annotations

import argparse
import functools
import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from reassignd.admin import settings as admin
from reassignd.admin.batch_command import AdminBatchCommand, BatchVerb, add_batch_parser, batch_settings
from reassignd.admin.batch_file import BatchBody
from reassignd.admin.command_line import AdminReassignCommand, add_reassign_parser, reassign_settings
from reassignd.broker.settings import DEFAULT_REPLICATION_BYTES_PER_S, BrokerSettings, cluster_settings
from reassignd.controller.settings import ControllerSettings
from reassignd.http.auth import TokensFileError, check_bind, load_tokens
from reassignd.log_setup import LEVELS, LogSettings
from reassignd.plan_format import Plan
from reassignd.zk.client import DEFAULT_SESSION_TIMEOUT_S

ENV_PREFIX = "REASSIGND_"
COMMANDS = ("controller", "broker", "cluster", "admin", "feed")  # feed: its own parser (reassignd.feeder)


class ConfigError(Exception):
    """Bad arguments or configuration; ``str(error)`` is a one-line reason."""


# --- value parsers: a flag or variable gives a string, the TOML file a native value -----------------

Parser = Callable[[object], object]


def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a non-empty string, got {value!r}")
    return value.strip()


def _integer(minimum: int | None = None, maximum: int | None = None) -> Parser:
    def parse(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError(f"expected an integer, got {value!r}")
        try:
            number = int(value) if isinstance(value, int) else int(value.strip(), 10)
        except ValueError:
            raise ValueError(f"expected an integer, got {value!r}") from None
        if minimum is not None and number < minimum:
            raise ValueError(f"must be >= {minimum}, got {number}")
        if maximum is not None and number > maximum:
            raise ValueError(f"must be <= {maximum}, got {number}")
        return number

    return parse


def _number(minimum: float, *, inclusive: bool) -> Parser:
    def parse(value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"expected a number, got {value!r}")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"expected a number, got {value!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"expected a finite number, got {value!r}")
        if number < minimum or (not inclusive and number == minimum):
            raise ValueError(f"must be {'>=' if inclusive else '>'} {minimum:g}, got {number:g}")
        return number

    return parse


def _choice(*choices: str) -> Parser:
    def parse(value: object) -> str:
        if not isinstance(value, str) or value.strip().lower() not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        return value.strip().lower()

    return parse


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise ValueError(f"invalid port {text!r}")
    return int(text)


def split_host_port(text: str) -> tuple[str, int]:
    """``host:port`` or ``[v6]:port`` → (host, port); the host of a v6 literal without brackets."""
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise ValueError(f"expected [HOST]:PORT, got {text!r}")
        return host, _port(rest[1:])
    host, sep, port = text.rpartition(":")
    if not sep or not host or ":" in host:
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    return host, _port(port)


def _host_port(value: object) -> tuple[str, int]:
    return split_host_port(_text(value))


def _zk_connect(value: object) -> str:
    """``host:port[,host:port...][/chroot]``, as Kafka's ``zookeeper.connect``."""
    text = _text(value)
    servers, slash, chroot = text.partition("/")
    if not servers:
        raise ValueError(f"expected HOST:PORT[,HOST:PORT...][/chroot], got {text!r}")
    for server in servers.split(","):
        _host, port = split_host_port(server)
        if port == 0:
            raise ValueError(f"invalid port 0 in {text!r}")
    if slash and chroot and any(not part for part in chroot.split("/")):
        raise ValueError(f"invalid chroot /{chroot!r} (empty path segment)")
    return text


def _bootstrap(value: object) -> str:
    text = _text(value)
    for server in text.split(","):
        split_host_port(server)
    return text


# --- the options of each subcommand ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Option:
    flag: str  # without the leading dashes: "controller-id"
    parse: Parser
    help: str
    default: object = None  # None: unset (optional) or required, see ``required``
    metavar: str | None = None
    required: bool = False

    @property
    def dest(self) -> str:
        return self.flag.replace("-", "_")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.dest.upper()


ZK = Option(
    "zk",
    _zk_connect,
    "ZooKeeper connect string, Kafka's zookeeper.connect form",
    metavar="HOST:PORT[,HOST:PORT...][/chroot]",
    required=True,
)
SESSION_TIMEOUT = Option(
    "session-timeout-s",
    _number(0, inclusive=False),
    "ZooKeeper session timeout, seconds",
    DEFAULT_SESSION_TIMEOUT_S,
    "S",
)
LOG_LEVEL = Option("log-level", _choice(*LEVELS), "log level: " + ", ".join(LEVELS), "info", "LEVEL")
LOG_FORMAT = Option("log-format", _choice("text", "json"), "log line format: text or json", "text", "FORMAT")
COMMON = (ZK, SESSION_TIMEOUT, LOG_LEVEL, LOG_FORMAT)

CONTROLLER_OPTIONS = (
    ZK,
    Option(
        "controller-id", _integer(0), "this controller's id (must not clash with a broker id)", 9000, "ID"
    ),
    Option(
        "http", _host_port, "address of the HTTP API; port 0 picks a free one", "127.0.0.1:8080", "HOST:PORT"
    ),
    Option(
        "auth-tokens",
        _text,
        "TOML file of bearer tokens; required to bind anything but loopback",
        metavar="FILE",
    ),
    Option(
        "events-bootstrap-servers",
        _bootstrap,
        "Kafka bootstrap servers of the event stream (off when unset)",
        metavar="HOST:PORT[,...]",
    ),
    Option(
        "events-topic",
        _text,
        "Kafka topic of the event stream (created when missing)",
        "reassignd.events",
        "TOPIC",
    ),
    Option(
        "events-buffer-records",
        _integer(1),
        "event records held for Kafka at most; more are dropped and counted",
        10_000,
        "N",
    ),
    Option(
        "events-progress-interval-s",
        _number(0, inclusive=True),
        "seconds between reassignment_progress records of each moving partition (0: none)",
        10.0,
        "S",
    ),
    Option(
        "events-security-protocol",
        _choice("plaintext", "ssl", "sasl_plaintext", "sasl_ssl"),
        "security protocol to Kafka",
        "plaintext",
        "PROTOCOL",
    ),
    Option(
        "events-sasl-mechanism", _text, "SASL mechanism to Kafka (PLAIN, SCRAM-SHA-256, ...)", metavar="M"
    ),
    Option("events-sasl-username", _text, "SASL username to Kafka", metavar="USER"),
    Option("events-sasl-password", _text, "SASL password to Kafka", metavar="PASSWORD"),
    Option("events-ssl-cafile", _text, "CA file to verify Kafka's TLS certificates", metavar="FILE"),
    Option(
        "quota-window-num",
        _integer(1),
        "KIP-599 controller.quota.window.num: burst = rate × num × size",
        11,
        "N",
    ),
    Option(
        "quota-window-size-s",
        _number(0, inclusive=False),
        "KIP-599 controller.quota.window.size.seconds",
        1.0,
        "S",
    ),
    Option(
        "batch-moves-per-broker",
        _integer(1),
        "a batch's default cap of concurrent incoming (and outgoing) moves per broker",
        5,
        "N",
    ),
    Option("batch-moves-in-cluster", _integer(1), "a batch's default cap of moves in the cluster", 1000, "N"),
    Option(
        "batch-leader-moves-per-broker",
        _integer(1),
        "a batch's default cap of concurrent leadership changes per broker",
        1000,
        "N",
    ),
    Option(
        "batch-stuck-after-s",
        _number(0, inclusive=False),
        "a move running longer than this and slower than --batch-stuck-below-bytes-per-s is stuck",
        600.0,
        "S",
    ),
    Option(
        "batch-stuck-below-bytes-per-s",
        _number(0, inclusive=True),
        "the rate under which a long move is stuck",
        1048576.0,
        "B",
    ),
    SESSION_TIMEOUT,
    LOG_LEVEL,
    LOG_FORMAT,
)

BROKER_FLAGS = (
    Option("rack", _text, "rack of the broker", metavar="R"),
    Option("host", _text, "host the agent binds and registers", "127.0.0.1", "HOST"),
    Option("control-port", _integer(0, 65535), "port of the CONTROL listener; 0 picks a free one", 0, "PORT"),
    Option(
        "replication-bytes-per-s",
        _number(0, inclusive=True),
        "replication bandwidth of the broker, each direction",
        DEFAULT_REPLICATION_BYTES_PER_S,
        "BYTES",
    ),
    Option(
        "replica-lag-time-max-ms",
        _integer(1),
        "a follower not caught up for this long leaves the ISR",
        30000,
        "MS",
    ),
    Option("isr-linger-ms", _integer(0), "ISR changes are batched over this long", 100, "MS"),
)

BROKER_OPTIONS = (
    ZK,
    Option("id", _integer(0), "broker id", metavar="N", required=True),
    *BROKER_FLAGS,
    SESSION_TIMEOUT,
    LOG_LEVEL,
    LOG_FORMAT,
)

CLUSTER_OPTIONS = (
    ZK,
    Option("brokers", _integer(1), "number of broker agents", metavar="N", required=True),
    Option("first-id", _integer(0), "id of the first broker; the others follow", 1, "ID"),
    Option(
        "racks",
        _integer(1),
        'spread brokers over K racks: broker i gets "r<(i - first-id) mod K>"',
        metavar="K",
    ),
    *BROKER_FLAGS,
    SESSION_TIMEOUT,
    LOG_LEVEL,
    LOG_FORMAT,
)

# `reassignd admin <client>`: the connection flags the admin clients share (an `[admin]` table in
# the file); what to do this run (verb, plan file) is command-line only (reassignd.admin.command_line).
ADMIN_OPTIONS = (
    Option("bootstrap-controller", admin.parse_controller_url, admin.BOOTSTRAP_HELP, metavar="URL"),
    Option("zk", _zk_connect, "ZooKeeper, for the KIP-236 verbs", metavar="HOST:PORT[,...][/chroot]"),
    Option("auth-token", _text, "bearer token for the controller's HTTP API", metavar="TOKEN"),
    Option(
        "request-timeout-s", _number(0, inclusive=False), admin.TIMEOUT_HELP, admin.REQUEST_TIMEOUT_S, "S"
    ),
    Option("log-level", _choice(*LEVELS), "log level: " + ", ".join(LEVELS), "warning", "LEVEL"),
    LOG_FORMAT,
)

OPTIONS: dict[str, tuple[Option, ...]] = {
    "controller": CONTROLLER_OPTIONS,
    "broker": BROKER_OPTIONS,
    "cluster": CLUSTER_OPTIONS,
    "admin": ADMIN_OPTIONS,
}

DESCRIPTIONS = {
    "controller": "Run a controller instance (active or standby) with its HTTP API.",
    "broker": "Run one broker agent.",
    "cluster": "Run N broker agents in one process, each with its own ZooKeeper session.",
    "admin": "Command-line clients of the controller, shaped like Kafka's admin tools.",
}

KNOWN_KEYS = frozenset(o.flag for options in OPTIONS.values() for o in options)


# --- the result ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ControllerCommand:
    settings: ControllerSettings
    log: LogSettings = field(default_factory=LogSettings)


@dataclass(frozen=True, slots=True)
class BrokerCommand:
    settings: BrokerSettings
    log: LogSettings = field(default_factory=LogSettings)


@dataclass(frozen=True, slots=True)
class ClusterCommand:
    settings: tuple[BrokerSettings, ...]  # one per agent, ids first-id .. first-id + N - 1
    log: LogSettings = field(default_factory=LogSettings)


Command = ControllerCommand | BrokerCommand | ClusterCommand | AdminReassignCommand | AdminBatchCommand


# --- pure resolution ----------------------------------------------------------------------------------


def file_values(document: Mapping[str, Any], command: str, source: str) -> dict[str, object]:
    """The TOML document's values for ``command``, keyed by flag name (dashes)."""
    values: dict[str, object] = {}
    table: Mapping[str, Any] = {}
    for key, value in document.items():
        if key in COMMANDS:
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: [{key}] must be a table")
            if key == command:
                table = value
            continue
        _put_file_value(values, key, value, source)
    for key, value in table.items():
        _put_file_value(values, key, value, f"{source} [{command}]")
    wanted = {o.flag for o in OPTIONS[command]}
    return {k: v for k, v in values.items() if k in wanted}


def _put_file_value(values: dict[str, object], key: str, value: object, source: str) -> None:
    flag = key.replace("_", "-")
    if flag not in KNOWN_KEYS:
        raise ConfigError(f"{source}: unknown key {key!r}")
    values[flag] = value


def resolve(
    command: str,
    flags: Mapping[str, object],
    env: Mapping[str, str],
    file: Mapping[str, object],
    file_source: str = "config file",
) -> Command:
    """Merge flag > environment > file > default for ``command``; validate; build its settings.

    ``flags`` is keyed by flag name (``"controller-id"``) and holds only the flags given; ``file``
    is the output of :func:`file_values`.
    """
    values = _merge(command, flags, env, file, file_source)
    log = LogSettings(
        level=_str(values, "log-level"), format="json" if values["log-format"] == "json" else "text"
    )
    try:
        match command:
            case "controller":
                return ControllerCommand(_controller_settings(values), log)
            case "broker":
                return BrokerCommand(_broker_settings(values, broker_id=_int(values, "id")), log)
            case "cluster":
                return ClusterCommand(_cluster_settings(values), log)
    except ValueError as e:  # the settings objects' own checks
        raise ConfigError(str(e)) from None
    raise ConfigError(f"unknown command {command!r}")


def _merge(
    command: str,
    flags: Mapping[str, object],
    env: Mapping[str, str],
    file: Mapping[str, object],
    file_source: str,
) -> dict[str, object]:
    """Each option of ``command``: flag > environment > file > default, parsed."""
    values: dict[str, object] = {}
    for option in OPTIONS[command]:
        if option.flag in flags:
            raw, source = flags[option.flag], f"--{option.flag}"
        elif option.env in env:
            raw, source = env[option.env], option.env
        elif option.flag in file:
            raw, source = file[option.flag], f"{file_source}: {option.flag}"
        elif option.required:
            raise ConfigError(
                f"missing --{option.flag} (or {option.env}, or {option.flag} in the --config file)"
            )
        elif option.default is None:
            values[option.flag] = None
            continue
        else:
            raw, source = option.default, f"default of --{option.flag}"

        try:
            values[option.flag] = option.parse(raw)
        except ValueError as e:
            raise ConfigError(f"{source}: {e}") from None
    return values


def resolve_admin_reassign(
    verb: admin.Verb,
    plan_path: str | None,
    flags: Mapping[str, object],
    env: Mapping[str, str],
    file: Mapping[str, object],
    file_source: str = "config file",
    read_plan: Callable[[str], Plan] | None = None,
) -> AdminReassignCommand:
    """Connection options merged as for any command; the verb's needs and plan checked (exit 2)."""
    values = _merge("admin", flags, env, file, file_source)
    try:
        settings = reassign_settings(verb, plan_path, values, read_plan)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    log = LogSettings(_str(values, "log-level"), "json" if values["log-format"] == "json" else "text")
    return AdminReassignCommand(settings, log)


def resolve_admin_batch(
    verb: BatchVerb,
    batch_file: str | None,
    batch_id: str | None,
    flags: Mapping[str, object],
    env: Mapping[str, str],
    file: Mapping[str, object],
    file_source: str = "config file",
    read_file: Callable[[str], tuple[BatchBody, ...]] | None = None,
) -> AdminBatchCommand:
    """``reassignd admin batch``: connection options merged as for any command, then the verb's
    argument and batch file checked (exit 2)."""
    values = _merge("admin", flags, env, file, file_source)
    try:
        settings = batch_settings(verb, batch_file, batch_id, values, read_file)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    log = LogSettings(_str(values, "log-level"), "json" if values["log-format"] == "json" else "text")
    return AdminBatchCommand(settings, log)


def _str(values: Mapping[str, object], flag: str) -> str:
    value = values[flag]
    assert isinstance(value, str), flag
    return value


def _opt_str(values: Mapping[str, object], flag: str) -> str | None:
    value = values[flag]
    assert value is None or isinstance(value, str), flag
    return value


def _int(values: Mapping[str, object], flag: str) -> int:
    value = values[flag]
    assert isinstance(value, int), flag
    return value


def _opt_int(values: Mapping[str, object], flag: str) -> int | None:
    value = values[flag]
    assert value is None or isinstance(value, int), flag
    return value


def _float(values: Mapping[str, object], flag: str) -> float:
    value = values[flag]
    assert isinstance(value, int | float), flag
    return float(value)


def _controller_settings(values: Mapping[str, object]) -> ControllerSettings:
    http = values["http"]
    assert isinstance(http, tuple)
    host, port = http
    tokens = _opt_str(values, "auth-tokens")
    refusal = check_bind(host, has_tokens=tokens is not None)
    if refusal is not None:
        raise ConfigError(refusal)
    return ControllerSettings(
        zk_connect=_str(values, "zk"),
        controller_id=_int(values, "controller-id"),
        http_host=host,
        http_port=port,
        auth_tokens_path=tokens,
        session_timeout_s=_float(values, "session-timeout-s"),
        events_bootstrap_servers=_opt_str(values, "events-bootstrap-servers"),
        events_topic=_str(values, "events-topic"),
        events_buffer_records=_int(values, "events-buffer-records"),
        events_progress_interval_s=_float(values, "events-progress-interval-s"),
        events_security_protocol=_str(values, "events-security-protocol").upper(),
        events_sasl_mechanism=_opt_str(values, "events-sasl-mechanism"),
        events_sasl_username=_opt_str(values, "events-sasl-username"),
        events_sasl_password=_opt_str(values, "events-sasl-password"),
        events_ssl_cafile=_opt_str(values, "events-ssl-cafile"),
        quota_window_num=_int(values, "quota-window-num"),
        quota_window_size_s=_float(values, "quota-window-size-s"),
        batch_moves_per_broker=_int(values, "batch-moves-per-broker"),
        batch_moves_in_cluster=_int(values, "batch-moves-in-cluster"),
        batch_leader_moves_per_broker=_int(values, "batch-leader-moves-per-broker"),
        batch_stuck_after_s=_float(values, "batch-stuck-after-s"),
        batch_stuck_below_bytes_per_s=_float(values, "batch-stuck-below-bytes-per-s"),
    )


def _broker_settings(values: Mapping[str, object], *, broker_id: int) -> BrokerSettings:
    return BrokerSettings(
        zk_connect=_str(values, "zk"),
        broker_id=broker_id,
        rack=_opt_str(values, "rack"),
        host=_str(values, "host"),
        control_port=_int(values, "control-port"),
        replication_bytes_per_s=_float(values, "replication-bytes-per-s"),
        replica_lag_time_max_ms=_int(values, "replica-lag-time-max-ms"),
        isr_linger_ms=_int(values, "isr-linger-ms"),
        session_timeout_s=_float(values, "session-timeout-s"),
    )


def _cluster_settings(values: Mapping[str, object]) -> tuple[BrokerSettings, ...]:
    racks = _opt_int(values, "racks")
    if racks is not None and values["rack"] is not None:
        raise ConfigError("give --rack (one rack for all) or --racks (spread over K racks), not both")
    first_id = _int(values, "first-id")
    brokers = _int(values, "brokers")
    port = _int(values, "control-port")
    if port and port + brokers - 1 > 65535:
        raise ConfigError(f"--control-port {port}: {brokers} consecutive ports do not fit below 65536")
    base = _broker_settings(values, broker_id=first_id)
    return tuple(cluster_settings(base, brokers, first_id, racks))


# --- the shell: argv, the config file, files the settings name ------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (and exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _help(option: Option) -> str:
    parts = [option.help]
    if option.required:
        parts.append("required")
    elif option.default is not None:
        parts.append(f"default: {option.default}")
    parts.append(f"env {option.env}")
    return f"{parts[0]} ({'; '.join(parts[1:])})"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="reassignd",
        description="reassignd: moves Kafka partitions between brokers over Kafka's ZooKeeper layout.",
        epilog="Every flag also reads REASSIGND_<FLAG> and the --config file; flag > env > file.",
        allow_abbrev=False,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command, options in OPTIONS.items():
        sub = subparsers.add_parser(
            command,
            help=DESCRIPTIONS[command],
            description=DESCRIPTIONS[command],
            allow_abbrev=False,
            argument_default=argparse.SUPPRESS,
        )
        if command == "admin":
            clients = sub.add_subparsers(dest="admin_client", metavar="CLIENT")
            add_reassign_parser(clients, functools.partial(_add_options, options=options))
            add_batch_parser(clients, functools.partial(_add_options, options=options))
        else:
            _add_options(sub, options)
    # Listed for --help only: reassignd.cli hands `reassignd feed ...` to reassignd.feeder.command_line.
    subparsers.add_parser(
        "feed", help="Plan reassignments with Spark and feed them as batches (reassignd feed --help)."
    )
    return parser


def _add_options(parser: argparse.ArgumentParser, options: tuple[Option, ...]) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=f"TOML file with the same keys as the flags (env {ENV_PREFIX}CONFIG)",
    )
    for option in options:
        parser.add_argument(f"--{option.flag}", dest=option.dest, metavar=option.metavar, help=_help(option))


def read_config_file(path: str) -> dict[str, Any]:
    try:
        with Path(path).open("rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path}: invalid TOML: {e}") from None


def check_files(command: Command) -> None:
    """Files the settings name must exist and parse now, not when the first request comes."""
    if isinstance(command, ControllerCommand) and command.settings.auth_tokens_path is not None:
        try:
            load_tokens(command.settings.auth_tokens_path)
        except TokensFileError as e:
            raise ConfigError(str(e)) from None


def load_command(argv: Sequence[str], env: Mapping[str, str]) -> Command:
    """Parse ``argv`` (without the program name); argparse itself exits 2 on a malformed line."""
    parser = build_parser()
    args = vars(parser.parse_args(argv))
    command = args.pop("command", None)
    if command is None:
        parser.exit(
            2, "reassignd: error: choose a command: controller, broker, cluster, admin (see --help)\n"
        )
    if command == "admin" and args.get("admin_client") is None:
        parser.exit(
            2, "reassignd admin: error: choose a client: reassign, batch (see reassignd admin --help)\n"
        )
    if command == "admin" and args.get("admin_client") == "batch" and args.get("batch_verb") is None:
        verbs = ", ".join(v.value for v in BatchVerb)
        parser.exit(2, f"reassignd admin batch: error: choose a verb: {verbs} (see --help)\n")
    admin_client, verb = args.pop("admin_client", None), args.pop("verb", None)
    plan_path = args.pop("reassignment_json_file", None)
    batch_verb, batch_file = args.pop("batch_verb", None), args.pop("batch_file", None)
    batch_id = args.pop("batch_id", None)
    config_path = args.pop("config", None) or env.get(ENV_PREFIX + "CONFIG")
    file: dict[str, object] = {}
    if config_path:
        file = file_values(read_config_file(config_path), command, config_path)
    flags = {dest.replace("_", "-"): value for dest, value in args.items()}
    if admin_client == "reassign":
        assert isinstance(verb, admin.Verb), "argparse requires exactly one verb"
        return resolve_admin_reassign(verb, plan_path, flags, env, file, config_path or "config file")
    if admin_client == "batch":
        return resolve_admin_batch(
            BatchVerb(batch_verb), batch_file, batch_id, flags, env, file, config_path or "config file"
        )
    resolved = resolve(command, flags, env, file, config_path or "config file")
    check_files(resolved)
    return resolved
