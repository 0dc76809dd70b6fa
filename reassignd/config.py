"""The one command-line engine: every subcommand (``controller``, ``broker``, ``cluster``,
``admin reassign|batch|elect|demote|promote|zk-acls``, ``feed plan|run``, ``events tail``) declared once, with the same
sources and rules for all.

Precedence: flag > environment > file > default. Every option ``--some-flag`` has the variable
``REASSIGND_SOME_FLAG`` and the file key ``some-flag`` (or ``some_flag``). File keys sit at the
top level; a table named after the subcommand's first word (``[controller]``, ``[broker]``,
``[cluster]``, ``[admin]``, ``[feed]``, ``[events]``) overrides them for it; a key no subcommand
knows is refused, a key of another subcommand is left to it, so one file can serve all. What one
run does (a verb, a plan or batch file, a batch id, the partitions to elect) is command-line only.
``--help`` and ``docs/cli.md`` come from the same declarations.

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
from reassignd.admin import batch_command, command_line, demote_command, elect_command, zk_acls_command
from reassignd.admin import settings as admin
from reassignd.admin.batch_command import AdminBatchCommand, BatchVerb, batch_settings
from reassignd.admin.batch_file import BatchBody
from reassignd.admin.command_line import AdminReassignCommand, reassign_settings
from reassignd.admin.connection import AUTH_TOKEN, BOOTSTRAP_CONTROLLER, REQUEST_TIMEOUT, TLS_OPTIONS, ZK
from reassignd.admin.demote_command import AdminDemoteCommand, demote_settings
from reassignd.admin.elect_command import AdminElectCommand, elect_settings
from reassignd.admin.zk_acls_command import AdminZkAclsCommand, zk_acls_settings
from reassignd.broker.settings import BrokerSettings, ClusterLayout, cluster_settings
from reassignd.controller.settings import ControllerSettings
from reassignd.feeder import command_line as feed
from reassignd.feeder.command_line import FeedPlanCommand, FeedRunCommand
from reassignd.http.auth import TokensFileError, load_tokens
from reassignd.http.listener_config import http_listener_problem, http_tls_problem
from reassignd.int_limits import PORT_MAX
from reassignd.kafka_listener.config import kafka_listener_problem, tls_problem
from reassignd.log_setup import LogSettings
from reassignd.options import ENV_PREFIX, ConfigError, Option, Subcommand
from reassignd.plan_format import Plan
from reassignd.stream import tail
from reassignd.stream.tail import EventsTailCommand
from reassignd.zk import security as zk_security_options
from reassignd.zk.security import ZkSecurity, zk_security

__all__ = ["ConfigError", "file_values", "load_command", "resolve"]


class UsageLine(ConfigError):
    """A malformed command line; ``str(error)`` is the whole line, program name included."""


# --- the options of each subcommand: declared once, most on the settings dataclasses ---------------

LOG_OPTIONS = opt.options_of(LogSettings)
CLIENT_LOG_OPTIONS = (dataclasses.replace(LOG_OPTIONS[0], default="warning"), LOG_OPTIONS[1])
# every role that talks to ZooKeeper: SASL credentials and the ACL mode (reassignd.zk.security)
ZK_SECURITY_OPTIONS = zk_security_options.OPTIONS
CONTROLLER_OPTIONS = opt.options_of(ControllerSettings) + ZK_SECURITY_OPTIONS + LOG_OPTIONS
BROKER_OPTIONS = opt.options_of(BrokerSettings) + ZK_SECURITY_OPTIONS + LOG_OPTIONS
_AGENT = opt.options_of(BrokerSettings, skip=("broker_id",))
CLUSTER_OPTIONS = _AGENT[:1] + opt.options_of(ClusterLayout) + _AGENT[1:] + ZK_SECURITY_OPTIONS + LOG_OPTIONS
# `reassignd admin <client>`: the connection flags the admin clients share (an `[admin]` table)
ADMIN_OPTIONS = (
    BOOTSTRAP_CONTROLLER,
    ZK,
    *ZK_SECURITY_OPTIONS,
    AUTH_TOKEN,
    *TLS_OPTIONS,
    REQUEST_TIMEOUT,
    *CLIENT_LOG_OPTIONS,
)
FEED_PLAN_OPTIONS = feed.PLAN_OPTIONS + CLIENT_LOG_OPTIONS
FEED_RUN_OPTIONS = feed.RUN_OPTIONS + CLIENT_LOG_OPTIONS
EVENTS_TAIL_OPTIONS = tail.TAIL_OPTIONS + CLIENT_LOG_OPTIONS


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
    processes: int = 1  # the agents run in this many processes


Command = (
    ControllerCommand
    | BrokerCommand
    | ClusterCommand
    | AdminReassignCommand
    | AdminBatchCommand
    | AdminElectCommand
    | AdminDemoteCommand
    | AdminZkAclsCommand
    | FeedPlanCommand
    | FeedRunCommand
    | EventsTailCommand
)


# --- the subcommands: each resolves its merged values (and its command-line-only arguments) ----------


def _controller(values: Mapping[str, object], _: Mapping[str, object]) -> ControllerCommand:
    settings = opt.build(ControllerSettings, CONTROLLER_OPTIONS, values, zk_security=zk_security(values))
    refusal = http_listener_problem(settings) or kafka_listener_problem(settings)
    if refusal is not None:
        raise ConfigError(refusal)
    return ControllerCommand(settings, _log(values))


def _broker(values: Mapping[str, object], _: Mapping[str, object]) -> BrokerCommand:
    return BrokerCommand(
        opt.build(BrokerSettings, BROKER_OPTIONS, values, zk_security=zk_security(values)), _log(values)
    )


def _cluster(values: Mapping[str, object], _: Mapping[str, object]) -> ClusterCommand:
    layout = opt.build(ClusterLayout, CLUSTER_OPTIONS, values)
    if layout.racks is not None and values["rack"] is not None:
        raise ConfigError("give --rack (one rack for all) or --racks (spread over K racks), not both")
    base = opt.build(
        BrokerSettings, CLUSTER_OPTIONS, values, broker_id=layout.first_id, zk_security=zk_security(values)
    )
    if base.control_port and base.control_port + layout.brokers - 1 > PORT_MAX:
        raise ConfigError(
            f"--control-port {base.control_port}: {layout.brokers} consecutive ports do not fit below {PORT_MAX + 1}"
        )
    if layout.processes > layout.brokers:
        raise ConfigError(f"--processes {layout.processes}: more processes than --brokers ({layout.brokers})")
    return ClusterCommand(
        tuple(cluster_settings(base, layout.brokers, layout.first_id, layout.racks)),
        _log(values),
        layout.processes,
    )


def _admin_reassign(
    values: Mapping[str, object],
    arguments: Mapping[str, object],
    read_plan: Callable[[str], Plan] | None = None,
) -> AdminReassignCommand:
    verb, plan_path = arguments.get("verb"), arguments.get("reassignment_json_file")
    assert isinstance(verb, admin.Verb), "argparse requires exactly one verb"
    assert plan_path is None or isinstance(plan_path, str)
    timeout_ms = arguments.get("log_dir_timeout_ms", admin.LOG_DIR_TIMEOUT_MS)
    assert isinstance(timeout_ms, int)
    return AdminReassignCommand(
        reassign_settings(verb, plan_path, values, read_plan, timeout_ms), _log(values)
    )


def _admin_batch(
    verb: BatchVerb,
    values: Mapping[str, object],
    arguments: Mapping[str, object],
    read_file: Callable[[str], tuple[BatchBody, ...]] | None = None,
) -> AdminBatchCommand:
    batch_file, batch_id = arguments.get("batch_file"), arguments.get("batch_id")
    assert batch_file is None or isinstance(batch_file, str)
    assert batch_id is None or isinstance(batch_id, str)
    return AdminBatchCommand(batch_settings(verb, batch_file, batch_id, values, read_file), _log(values))


def _admin_elect(
    values: Mapping[str, object],
    arguments: Mapping[str, object],
    read_file: Callable[[str], tuple[tuple[str, int], ...]] | None = None,
) -> AdminElectCommand:
    named = {dest.replace("_", "-"): value for dest, value in arguments.items()}
    return AdminElectCommand(elect_settings(named, values, read_file), _log(values))


def _admin_demote(
    verb: str, values: Mapping[str, object], arguments: Mapping[str, object]
) -> AdminDemoteCommand:
    return AdminDemoteCommand(demote_settings(verb, arguments, values), _log(values))


def _admin_zk_acls(values: Mapping[str, object], arguments: Mapping[str, object]) -> AdminZkAclsCommand:
    return AdminZkAclsCommand(zk_acls_settings(arguments, values), _log(values))


def _feed_plan(values: Mapping[str, object], _: Mapping[str, object]) -> FeedPlanCommand:
    return feed.resolve_plan(values, _log(values))


def _feed_run(values: Mapping[str, object], _: Mapping[str, object]) -> FeedRunCommand:
    return feed.resolve_run(values, _log(values))


def _events_tail(values: Mapping[str, object], _: Mapping[str, object]) -> EventsTailCommand:
    return EventsTailCommand(tail.tail_settings(values), _log(values))


def _log(values: Mapping[str, object]) -> LogSettings:
    return opt.build(LogSettings, LOG_OPTIONS, values)


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand(
        ("controller",),
        "Run a controller instance (active or standby) with its HTTP API.",
        CONTROLLER_OPTIONS,
        _controller,
    ),
    Subcommand(("broker",), "Run one broker agent.", BROKER_OPTIONS, _broker),
    Subcommand(
        ("cluster",),
        "Run N broker agents, each with its own ZooKeeper session, in one process or P.",
        CLUSTER_OPTIONS,
        _cluster,
    ),
    Subcommand(
        ("admin", "reassign"),
        command_line.DESCRIPTION,
        ADMIN_OPTIONS,
        _admin_reassign,
        command_line.add_reassign_arguments,
        command_line.EPILOG,
    ),
    *(
        Subcommand(
            ("admin", "batch", verb.value),
            batch_command.VERB_HELP[verb],
            ADMIN_OPTIONS,
            functools.partial(_admin_batch, verb),
            batch_command.add_batch_arguments(verb),
            batch_command.EPILOG,
        )
        for verb in BatchVerb
    ),
    Subcommand(
        ("admin", "elect"),
        elect_command.DESCRIPTION,
        ADMIN_OPTIONS,
        _admin_elect,
        elect_command.add_elect_arguments,
        elect_command.EPILOG,
    ),
    *(
        Subcommand(
            ("admin", verb),
            demote_command.DESCRIPTION[verb],
            ADMIN_OPTIONS,
            functools.partial(_admin_demote, verb),
            demote_command.add_demote_arguments,
            demote_command.EPILOG,
        )
        for verb in demote_command.VERBS
    ),
    Subcommand(
        ("admin", "zk-acls"),
        zk_acls_command.DESCRIPTION,
        ADMIN_OPTIONS,
        _admin_zk_acls,
        zk_acls_command.add_zk_acls_arguments,
        zk_acls_command.EPILOG,
    ),
    Subcommand(("feed", "plan"), feed.PLAN_DESCRIPTION, FEED_PLAN_OPTIONS, _feed_plan),
    Subcommand(("feed", "run"), feed.RUN_DESCRIPTION, FEED_RUN_OPTIONS, _feed_run),
    Subcommand(("events", "tail"), tail.DESCRIPTION, EVENTS_TAIL_OPTIONS, _events_tail),
)
BY_NAME = {sub.name: sub for sub in SUBCOMMANDS}

# the groups of subcommands: (what to choose, help)
GROUPS: dict[tuple[str, ...], tuple[str, str]] = {
    (): ("command", "reassignd: moves Kafka partitions between brokers over Kafka's ZooKeeper layout."),
    ("admin",): ("client", "Command-line clients of the controller, shaped like Kafka's admin tools."),
    ("admin", "batch"): ("verb", batch_command.DESCRIPTION),
    ("feed",): ("verb", feed.DESCRIPTION),
    ("events",): ("verb", "Read the controller's event stream."),
}

TABLES = frozenset(sub.table for sub in SUBCOMMANDS)
KNOWN_KEYS = frozenset(o.flag for sub in SUBCOMMANDS for o in sub.options)


# --- pure resolution ----------------------------------------------------------------------------------


def file_values(document: Mapping[str, Any], command: str, source: str) -> dict[str, object]:
    """The TOML document's values for ``command`` (a subcommand's name, or a table's: ``admin``),
    keyed by flag."""
    subcommand = BY_NAME.get(command) or next(sub for sub in SUBCOMMANDS if sub.table == command)
    return opt.file_values(document, subcommand, TABLES, KNOWN_KEYS, source)


def resolve(
    command: str,
    flags: Mapping[str, object],
    env: Mapping[str, str],
    file: Mapping[str, object],
    file_source: str = "config file",
    arguments: Mapping[str, object] | None = None,
) -> Command:
    """Merge flag > environment > file > default for ``command`` (a subcommand's name, e.g.
    ``"controller"`` or ``"feed plan"``); validate; build what it runs.

    ``flags`` is keyed by flag name (``"controller-id"``) and holds only the flags given; ``file``
    is the output of :func:`file_values`; ``arguments`` the command-line-only ones, by dest.
    """
    subcommand = BY_NAME.get(command)
    if subcommand is None:
        raise ConfigError(f"unknown command {command!r}")
    return _resolve(subcommand, flags, env, file, file_source, arguments or {})


def _resolve(
    subcommand: Subcommand,
    flags: Mapping[str, object],
    env: Mapping[str, str],
    file: Mapping[str, object],
    file_source: str,
    arguments: Mapping[str, object],
) -> Command:
    values = opt.merge(subcommand.options, flags, env, file, file_source)
    try:
        resolved = subcommand.resolve(values, arguments)
    except (ValueError, feed.UsageError) as e:  # the settings objects' own checks
        raise ConfigError(str(e)) from None
    return resolved  # type: ignore[return-value]  # each resolve returns one of Command


def resolve_admin_reassign(
    verb: admin.Verb,
    plan_path: str | None,
    flags: Mapping[str, object],
    env: Mapping[str, str],
    file: Mapping[str, object],
    file_source: str = "config file",
    read_plan: Callable[[str], Plan] | None = None,
) -> AdminReassignCommand:
    """``reassignd admin reassign``: the connection options merged as for any command, the
    verb's needs and plan checked (exit 2); ``read_plan`` stands in for the file."""
    values = opt.merge(ADMIN_OPTIONS, flags, env, file, file_source)
    try:
        return _admin_reassign(values, {"verb": verb, "reassignment_json_file": plan_path}, read_plan)
    except ValueError as e:
        raise ConfigError(str(e)) from None


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
    """``reassignd admin batch``: as :func:`resolve_admin_reassign`, with the verb's argument."""
    values = opt.merge(ADMIN_OPTIONS, flags, env, file, file_source)
    try:
        return _admin_batch(verb, values, {"batch_file": batch_file, "batch_id": batch_id}, read_file)
    except ValueError as e:
        raise ConfigError(str(e)) from None


# --- the shell: argv, the config file, files the settings name ------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (exit 2), raised for the caller to print."""

    def error(self, message: str) -> NoReturn:
        raise UsageLine(f"{self.prog}: error: {message} (see --help)")


def build_parser() -> argparse.ArgumentParser:
    """Every subcommand's parser, from the declarations (``--help`` and ``docs/cli.md``)."""
    parser = _Parser(
        prog="reassignd",
        description=GROUPS[()][1],
        epilog="Every option also reads REASSIGND_<FLAG> and the --config file; flag > env > file.",
        allow_abbrev=False,
    )
    groups: dict[tuple[str, ...], Any] = {}

    def children(words: tuple[str, ...], parent: argparse.ArgumentParser) -> Any:
        if words not in groups:
            noun = GROUPS[words][0]
            groups[words] = parent.add_subparsers(dest=f"_word_{len(words)}", metavar=noun.upper())
        return groups[words]

    parsers: dict[tuple[str, ...], argparse.ArgumentParser] = {(): parser}
    for sub in SUBCOMMANDS:
        for depth in range(1, len(sub.words) + 1):
            words = sub.words[:depth]
            if words in parsers:
                continue
            leaf = words == sub.words
            text = sub.help if leaf else GROUPS[words][1]
            child = children(words[:-1], parsers[words[:-1]]).add_parser(
                words[-1],
                help=text,
                description=text,
                epilog=sub.epilog if leaf else None,
                allow_abbrev=False,
                argument_default=argparse.SUPPRESS,
            )
            parsers[words] = child
            if leaf:
                child.set_defaults(_subcommand=sub.name)
                if sub.arguments is not None:
                    sub.arguments(child)
                _add_options(child, sub.options)
    return parser


def _add_options(parser: argparse.ArgumentParser, options: tuple[Option, ...]) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=f"TOML file with the same keys as the flags (env {ENV_PREFIX}CONFIG)",
    )
    for option in options:
        text = opt.help_text(option)
        if option.positional:
            parser.add_argument(option.dest, metavar=option.metavar, nargs="?", help=text)
        elif option.kind == opt.SWITCH:
            parser.add_argument(
                f"--{option.flag}", dest=option.dest, action="store_const", const=True, help=text
            )
        elif option.kind == opt.REPEAT:
            parser.add_argument(
                f"--{option.flag}", dest=option.dest, action="append", metavar=option.metavar, help=text
            )
        else:
            parser.add_argument(f"--{option.flag}", dest=option.dest, metavar=option.metavar, help=text)


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
    security = _zk_security_of(command)
    if security is not None:
        try:
            security.credentials()  # the password or JAAS file is read now (and at start)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        problem = security.tls_problem()
        if problem is not None:
            raise ConfigError(problem)
    if isinstance(command, ControllerCommand):
        problem = tls_problem(command.settings) or http_tls_problem(command.settings)
        if problem is not None:
            raise ConfigError(problem)


def _zk_security_of(command: Command) -> ZkSecurity | None:
    match command:
        case ControllerCommand(settings=settings) | BrokerCommand(settings=settings):
            return settings.zk_security
        case ClusterCommand(settings=agents):
            return agents[0].zk_security if agents else None
        case AdminReassignCommand(settings=settings) | AdminZkAclsCommand(settings=settings):
            return settings.zk_security
    return None


def _choose(args: Mapping[str, object]) -> NoReturn:
    """No subcommand was named to the end: say what to choose at the deepest group reached."""
    words: tuple[str, ...] = ()
    while (word := args.get(f"_word_{len(words)}")) is not None:
        words = (*words, str(word))
    noun = GROUPS[words][0]
    choices = list(
        dict.fromkeys(sub.words[len(words)] for sub in SUBCOMMANDS if sub.words[: len(words)] == words)
    )
    prog = " ".join(("reassignd", *words))
    raise UsageLine(f"{prog}: error: choose a {noun}: {', '.join(choices)} (see {prog} --help)")


def unknown_option(argv: Sequence[str], parser: argparse.ArgumentParser) -> UsageLine | None:
    """The first ``--flag`` of ``argv`` that the subcommand it names does not know, as one line
    naming the closest known flag; None when every flag is known (or no subcommand is named to
    the end: argparse then says what to choose). Checked before argparse, whose complaint about a
    missing required argument would otherwise hide the mistyped flag."""
    words: list[str] = []
    for arg in argv:
        if arg == "--":
            break
        if arg.startswith("-"):
            continue
        if tuple(words) in GROUPS and (*words, arg) in _PREFIXES:
            words.append(arg)
    if tuple(words) not in {sub.words for sub in SUBCOMMANDS}:
        return None
    leaf = parser
    for word in words:
        leaf = _subparser(leaf, word)
    problem = opt.unknown_flag(argv, [flag for flag in leaf._option_string_actions if flag.startswith("--")])
    if problem is None:
        return None
    prog = " ".join(("reassignd", *words))
    return UsageLine(f"{prog}: error: {problem} (see {prog} --help)")


_PREFIXES = frozenset(sub.words[:depth] for sub in SUBCOMMANDS for depth in range(1, len(sub.words) + 1))


def _subparser(parser: argparse.ArgumentParser, word: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices[word]
            assert isinstance(chosen, argparse.ArgumentParser)
            return chosen
    raise KeyError(word)


def load_command(argv: Sequence[str], env: Mapping[str, str]) -> Command:
    """Parse ``argv`` (without the program name), read the file, resolve. A malformed command
    line is a :class:`UsageLine`; ``--help`` exits 0 (argparse's SystemExit)."""
    parser = build_parser()
    unknown = unknown_option(argv, parser)
    if unknown is not None:
        raise unknown
    args = vars(parser.parse_args(list(argv)))
    name = args.pop("_subcommand", None)
    if name is None:
        _choose(args)
    subcommand = BY_NAME[str(name)]
    config_path = args.pop("config", None) or env.get(ENV_PREFIX + "CONFIG")
    source = str(config_path) if config_path else "config file"
    file: dict[str, object] = {}
    if config_path:
        file = file_values(read_config_file(str(config_path)), subcommand.name, source)
    dests = {o.dest: o.flag for o in subcommand.options}
    flags = {dests[dest]: value for dest, value in args.items() if dest in dests}
    arguments = {
        dest: value for dest, value in args.items() if dest not in dests and not dest.startswith("_word_")
    }
    resolved = _resolve(subcommand, flags, env, file, source, arguments)
    check_files(resolved)
    return resolved
