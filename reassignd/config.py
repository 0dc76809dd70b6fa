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
import dataclasses
import functools
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from reassignd import options as opt
from reassignd.admin import settings as admin
from reassignd.admin.batch_command import AdminBatchCommand, BatchVerb, add_batch_parser, batch_settings
from reassignd.admin.batch_file import BatchBody
from reassignd.admin.command_line import AdminReassignCommand, add_reassign_parser, reassign_settings
from reassignd.admin.elect_command import AdminElectCommand, add_elect_parser, elect_settings
from reassignd.broker.settings import BrokerSettings, ClusterLayout, cluster_settings
from reassignd.controller.settings import ControllerSettings
from reassignd.http.auth import TokensFileError, load_tokens
from reassignd.http.listener_config import http_listener_problem, http_tls_problem
from reassignd.kafka_listener.config import kafka_listener_problem, tls_problem
from reassignd.log_setup import LogSettings
from reassignd.options import ENV_PREFIX, Option
from reassignd.plan_format import Plan
from reassignd.tls import CA_FILE_HELP, CERT_FILE_HELP, KEY_FILE_HELP

COMMANDS = ("controller", "broker", "cluster", "admin", "feed")  # feed: its own parser (reassignd.feeder)


class ConfigError(Exception):
    """Bad arguments or configuration; ``str(error)`` is a one-line reason."""


# --- the options of each subcommand: declared on the settings dataclasses --------------------------

LOG_OPTIONS = opt.options_of(LogSettings)
CONTROLLER_OPTIONS = opt.options_of(ControllerSettings) + LOG_OPTIONS
BROKER_OPTIONS = opt.options_of(BrokerSettings) + LOG_OPTIONS
_AGENT = opt.options_of(BrokerSettings, skip=("broker_id",))
CLUSTER_OPTIONS = _AGENT[:1] + opt.options_of(ClusterLayout) + _AGENT[1:] + LOG_OPTIONS

# `reassignd admin <client>`: the connection flags the admin clients share (an `[admin]` table in
# the file); what to do this run (verb, plan file) is command-line only (reassignd.admin.command_line).
ADMIN_OPTIONS = (
    Option("bootstrap-controller", admin.parse_controller_url, admin.BOOTSTRAP_HELP, metavar="URL"),
    Option("zk", opt.zk_connect, "ZooKeeper, for the KIP-236 verbs", metavar="HOST:PORT[,...][/chroot]"),
    Option("auth-token", opt.text, "bearer token for the controller's HTTP API", metavar="TOKEN"),
    Option("ca-file", opt.text, CA_FILE_HELP, metavar="FILE"),
    Option("cert-file", opt.text, CERT_FILE_HELP, metavar="FILE"),
    Option("key-file", opt.text, KEY_FILE_HELP, metavar="FILE"),
    Option(
        "request-timeout-s", opt.number(0, inclusive=False), admin.TIMEOUT_HELP, admin.REQUEST_TIMEOUT_S, "S"
    ),
    dataclasses.replace(LOG_OPTIONS[0], default="warning"),
    LOG_OPTIONS[1],
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


Command = (
    ControllerCommand
    | BrokerCommand
    | ClusterCommand
    | AdminReassignCommand
    | AdminBatchCommand
    | AdminElectCommand
)


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
    log = opt.build(LogSettings, LOG_OPTIONS, values)
    try:
        match command:
            case "controller":
                return ControllerCommand(_controller_settings(values), log)
            case "broker":
                return BrokerCommand(opt.build(BrokerSettings, BROKER_OPTIONS, values), log)
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
    return AdminReassignCommand(settings, opt.build(LogSettings, LOG_OPTIONS, values))


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
    return AdminBatchCommand(settings, opt.build(LogSettings, LOG_OPTIONS, values))


def resolve_admin_elect(
    arguments: Mapping[str, object],
    flags: Mapping[str, object],
    env: Mapping[str, str],
    file: Mapping[str, object],
    file_source: str = "config file",
    read_file: Callable[[str], tuple[tuple[str, int], ...]] | None = None,
) -> AdminElectCommand:
    """``reassignd admin elect``: connection options merged as for any command, then the election
    type and the partitions (``arguments``, keyed by flag name) checked (exit 2)."""
    values = _merge("admin", flags, env, file, file_source)
    try:
        settings = elect_settings(arguments, values, read_file)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return AdminElectCommand(settings, opt.build(LogSettings, LOG_OPTIONS, values))


def _controller_settings(values: Mapping[str, object]) -> ControllerSettings:
    settings = opt.build(ControllerSettings, CONTROLLER_OPTIONS, values)
    refusal = http_listener_problem(settings)
    if refusal is not None:
        raise ConfigError(refusal)
    refusal = kafka_listener_problem(settings)
    if refusal is not None:
        raise ConfigError(refusal)
    return settings


def _cluster_settings(values: Mapping[str, object]) -> tuple[BrokerSettings, ...]:
    layout = opt.build(ClusterLayout, CLUSTER_OPTIONS, values)
    if layout.racks is not None and values["rack"] is not None:
        raise ConfigError("give --rack (one rack for all) or --racks (spread over K racks), not both")
    base = opt.build(BrokerSettings, CLUSTER_OPTIONS, values, broker_id=layout.first_id)
    if base.control_port and base.control_port + layout.brokers - 1 > 65535:
        raise ConfigError(
            f"--control-port {base.control_port}: {layout.brokers} consecutive ports do not fit below 65536"
        )
    return tuple(cluster_settings(base, layout.brokers, layout.first_id, layout.racks))


# --- the shell: argv, the config file, files the settings name ------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (and exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _help(option: Option) -> str:
    parts = [option.help]
    if option.required:
        parts.append("required")
    elif isinstance(option.default, bool):
        parts.append(f"default: {str(option.default).lower()}")
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
            add_elect_parser(clients, functools.partial(_add_options, options=options))
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
    if isinstance(command, ControllerCommand):
        problem = tls_problem(command.settings) or http_tls_problem(command.settings)
        if problem is not None:
            raise ConfigError(problem)


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
            2,
            "reassignd admin: error: choose a client: reassign, batch, elect (see reassignd admin --help)\n",
        )
    if command == "admin" and args.get("admin_client") == "batch" and args.get("batch_verb") is None:
        verbs = ", ".join(v.value for v in BatchVerb)
        parser.exit(2, f"reassignd admin batch: error: choose a verb: {verbs} (see --help)\n")
    admin_client, verb = args.pop("admin_client", None), args.pop("verb", None)
    plan_path = args.pop("reassignment_json_file", None)
    batch_verb, batch_file = args.pop("batch_verb", None), args.pop("batch_file", None)
    batch_id = args.pop("batch_id", None)
    elect_arguments = {
        name: args.pop(name.replace("-", "_"))
        for name in ("election-type", "all-topic-partitions", "topic", "partition", "path-to-json-file")
        if name.replace("-", "_") in args
    }
    config_path = args.pop("config", None) or env.get(ENV_PREFIX + "CONFIG")
    file: dict[str, object] = {}
    if config_path:
        file = file_values(read_config_file(config_path), command, config_path)
    flags = {dest.replace("_", "-"): value for dest, value in args.items()}
    if admin_client == "reassign":
        assert isinstance(verb, admin.Verb), "argparse requires exactly one verb"
        return resolve_admin_reassign(verb, plan_path, flags, env, file, config_path or "config file")
    if admin_client == "elect":
        return resolve_admin_elect(elect_arguments, flags, env, file, config_path or "config file")
    if admin_client == "batch":
        return resolve_admin_batch(
            BatchVerb(batch_verb), batch_file, batch_id, flags, env, file, config_path or "config file"
        )
    resolved = resolve(command, flags, env, file, config_path or "config file")
    check_files(resolved)
    return resolved
