"""Settings declared once: a settings dataclass's field says its flag, help and parser. Pure.

A field made with :func:`option` is a command-line option: ``--some-field`` (or the ``flag`` it
names), the variable ``REASSIGND_SOME_FIELD`` and the TOML key ``some-field``, all derived from
the one declaration; its default is the field's. :func:`options_of` lists a class's options in
field order and :func:`build` makes the object from parsed values, so nothing maps a flag to a
field by hand. The value parsers below take a string (a flag, a variable) or a TOML value.

:func:`parse_given` parses what a flag, a variable or the file gave for an option, the same way
for every command.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from reassignd.int_limits import PORT_MAX

ENV_PREFIX = "REASSIGND_"

# how an option is given: one value; a switch (present: true; the variable and the file say true
# or false); a repeatable flag (the variable: values separated by ';', the file: a list or one value)
VALUE = "value"
SWITCH = "switch"
REPEAT = "repeat"

Parser = Callable[[object], object]
_S = TypeVar("_S")


@dataclass(frozen=True, slots=True)
class Option:
    flag: str  # without the leading dashes: "controller-id"
    parse: Parser
    help: str
    default: object = None  # None: unset (optional) or required, see ``required``
    metavar: str | None = None
    required: bool = False
    fields: tuple[str, ...] = ()  # the settings fields it sets; a pair takes a parsed pair
    kind: str = VALUE  # VALUE (one value), SWITCH (a flag without value: true), REPEAT (a list)
    positional: bool = False  # given without its flag on the command line (PLAN, not --plan)

    @property
    def dest(self) -> str:
        return self.flag.replace("-", "_")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.dest.upper()


@dataclass(frozen=True, slots=True)
class _Spec:
    parse: Parser
    help: str
    metavar: str | None
    flag: str | None
    pair: str | None  # the field that takes the second half of a pair ("http_port")
    switch: bool = False  # a flag without a value (its variable and file key say true or false)


def option(
    default: Any = dataclasses.MISSING,
    *,
    parse: Parser,
    help: str,
    metavar: str | None = None,
    flag: str | None = None,
    pair: str | None = None,
    switch: bool = False,
    secret: bool = False,
) -> Any:
    """A settings field that is also an option; without ``default`` the option is required.
    ``pair``: a ``HOST:PORT`` option setting this field and the named one (parsed to a pair).
    ``switch``: a boolean given as a bare flag (``--self-healing``); its variable and its file key
    say true or false. ``secret``: a password, kept out of the settings' repr."""
    spec = _Spec(parse, help, metavar, flag, pair, switch)
    return dataclasses.field(default=default, metadata={"option": spec}, repr=not secret)


def options_of(cls: type[Any], *, skip: tuple[str, ...] = ()) -> tuple[Option, ...]:
    """The options declared on ``cls``'s fields, in field order, but those of ``skip`` (fields)."""
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    out: list[Option] = []
    for f in dataclasses.fields(cls):
        spec = f.metadata.get("option")
        if spec is None or f.name in skip:
            continue
        names = (f.name, spec.pair) if spec.pair else (f.name,)
        missing = f.default is dataclasses.MISSING
        default: object = None if missing else f.default
        if spec.pair and not missing and f.default is not None:
            default = f"{f.default}:{defaults[spec.pair]}"
        flag = spec.flag or f.name.replace("_", "-")
        kind = SWITCH if spec.switch else VALUE
        out.append(Option(flag, spec.parse, spec.help, default, spec.metavar, missing, names, kind))
    return tuple(out)


def build(cls: type[_S], options: tuple[Option, ...], values: Mapping[str, object], **fixed: object) -> _S:
    """``cls`` from ``values`` (parsed, keyed by flag; None: unset, the field's default holds),
    taking the options among ``options`` that set one of ``cls``'s fields."""
    own = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kwargs: dict[str, object] = dict(fixed)
    for opt in options:
        value = values.get(opt.flag)
        if value is None or not opt.fields or opt.fields[0] not in own:
            continue
        if len(opt.fields) == 2:
            assert isinstance(value, tuple)
            kwargs[opt.fields[0]], kwargs[opt.fields[1]] = value
        else:
            kwargs[opt.fields[0]] = value
    return cls(**kwargs)


def parse_given(option: Option, raw: object, *, from_text: bool) -> object:
    """The parsed value of ``option`` from what was given: a flag's argparse value, a variable's
    text (``from_text``) or a TOML value. A switch is a boolean; a repeatable option a tuple of
    parsed values (its variable separated by ';' or blanks, its file value a list or one value)."""
    if option.kind == SWITCH:
        return boolean(raw)
    if option.kind == REPEAT:
        if from_text and isinstance(raw, str):
            items: list[object] = [part for part in re.split(r"[;\s]+", raw) if part]
        elif isinstance(raw, list | tuple):
            items = list(raw)
        else:
            items = [raw]
        if not items:
            raise ValueError("expected at least one value")
        return tuple(option.parse(item) for item in items)
    return option.parse(raw)


# --- value parsers: a flag or variable gives a string, the TOML file a native value -----------------


def text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a non-empty string, got {value!r}")
    return value.strip()


def integer(minimum: int | None = None, maximum: int | None = None) -> Parser:
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


def number(minimum: float, *, inclusive: bool) -> Parser:
    def parse(value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"expected a number, got {value!r}")
        try:
            result = float(value)
        except ValueError:
            raise ValueError(f"expected a number, got {value!r}") from None
        if not math.isfinite(result):
            raise ValueError(f"expected a finite number, got {value!r}")
        if result < minimum or (not inclusive and result == minimum):
            raise ValueError(f"must be {'>=' if inclusive else '>'} {minimum:g}, got {result:g}")
        return result

    return parse


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def boolean(value: object) -> bool:
    """A TOML boolean, or (a flag, a variable) true/false, yes/no, on/off, 1/0 in any case."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(f"expected true or false, got {value!r}")


def choice(*choices: str, upper: bool = False) -> Parser:
    """One of ``choices``, any case; the value lower-cased (upper-cased with ``upper``)."""

    def parse(value: object) -> str:
        if not isinstance(value, str) or value.strip().lower() not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        chosen = value.strip().lower()
        return chosen.upper() if upper else chosen

    return parse


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= PORT_MAX:
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


def bounds(value: object) -> tuple[int, int]:
    """``MIN:MAX``, two positive integers in order (a TOML value may be the string or a pair)."""
    positive = integer(1)
    if isinstance(value, list | tuple) and len(value) == 2:
        low, high = int(positive(value[0])), int(positive(value[1]))  # type: ignore[call-overload]
    else:
        low_text, sep, high_text = text(value).partition(":")
        if not sep:
            raise ValueError(f"expected MIN:MAX, got {value!r}")
        low, high = int(positive(low_text)), int(positive(high_text))  # type: ignore[call-overload]
    if high < low:
        raise ValueError(f"MAX must be at least MIN, got {low}:{high}")
    return low, high


def port_range(value: object) -> tuple[int, int]:
    """``FIRST-LAST`` (ports in order, 1..65535; a TOML value may be the string or a pair), or
    ``0``: a free port each, chosen by the system, as ``(0, 0)``."""
    if isinstance(value, bool):
        raise ValueError(f"expected FIRST-LAST or 0, got {value!r}")
    if isinstance(value, list | tuple) and len(value) == 2:
        first_text, last_text = str(value[0]), str(value[1])
    elif isinstance(value, int) or (isinstance(value, str) and "-" not in value):
        if str(value).strip() != "0":
            raise ValueError(f"expected FIRST-LAST or 0, got {value!r}")
        return 0, 0
    else:
        first_text, _, last_text = text(value).partition("-")
    first, last = _port(first_text.strip()), _port(last_text.strip())
    if first == 0:
        raise ValueError(f"FIRST must be a port above 0, got {value!r}")
    if last < first:
        raise ValueError(f"LAST must be at least FIRST, got {value!r}")
    return first, last


def host_port(value: object) -> tuple[str, int]:
    return split_host_port(text(value))


def base_url(value: object) -> str:
    """``http://host[:port]`` or ``https://...``, the scheme required; no path, query or user."""
    given = text(value)
    parts = urlsplit(given)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected a URL like https://reassignd.example:8080, got {given!r}")
    try:
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        raise ValueError(f"invalid port in {given!r}") from None
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username is not None:
        raise ValueError(f"expected a base URL without path, query or user, got {given!r}")
    return f"{parts.scheme}://{parts.netloc}"


def zk_connect(value: object) -> str:
    """``host:port[,host:port...][/chroot]``, as Kafka's ``zookeeper.connect``."""
    connect = text(value)
    servers, slash, chroot = connect.partition("/")
    if not servers:
        raise ValueError(f"expected HOST:PORT[,HOST:PORT...][/chroot], got {connect!r}")
    for server in servers.split(","):
        _host, port = split_host_port(server)
        if port == 0:
            raise ValueError(f"invalid port 0 in {connect!r}")
    if slash and chroot and any(not part for part in chroot.split("/")):
        raise ValueError(f"invalid chroot /{chroot!r} (empty path segment)")
    return connect


def bootstrap(value: object) -> str:
    servers = text(value)
    for server in servers.split(","):
        split_host_port(server)
    return servers


# --- the command-line engine: every subcommand declared once, one precedence rule -------------------


class ConfigError(Exception):
    """Bad arguments or configuration; ``str(error)`` is a one-line reason (exit 2)."""


def unknown_flag(args: Sequence[str], known: Collection[str]) -> str | None:
    """``"unknown option --x; did you mean --y?"`` for the first ``--flag`` (or ``--flag=value``)
    of ``args`` not in ``known``, naming the closest known flag when one is close (the full flag of an abbreviation); None when
    every flag is known. Flags are never abbreviated: ``--exec`` is not ``--execute``."""
    for arg in args:
        if arg == "--":
            break
        flag = arg.split("=", 1)[0]
        if flag.startswith("--") and flag not in known:
            longer = sorted(k for k in known if k.startswith(flag))  # an abbreviation
            close = longer or difflib.get_close_matches(flag, list(known), n=1, cutoff=0.7)
            return f"unknown option {flag}" + (f"; did you mean {close[0]}?" if close else "")
    return None


@dataclass(frozen=True, slots=True)
class Subcommand:
    """One subcommand (``("admin", "batch", "submit")``): its options (each a flag, a
    ``REASSIGND_*`` variable and a key of the ``--config`` file's top level or ``[table]``), the
    arguments only its command line gives (verbs, files and ids of this run), and how the merged
    values become the command to run."""

    words: tuple[str, ...]
    help: str
    options: tuple[Option, ...]
    # (the options' parsed values keyed by flag, the command-line-only arguments keyed by dest)
    resolve: Callable[[Mapping[str, object], Mapping[str, object]], object]
    arguments: Callable[[Any], None] | None = None  # adds the command-line-only arguments
    epilog: str | None = None

    @property
    def name(self) -> str:
        return " ".join(self.words)

    @property
    def table(self) -> str:
        """Its table in the ``--config`` file: its first word (``[admin]``, ``[feed]``)."""
        return self.words[0]


def merge(
    options: tuple[Option, ...],
    flags: Mapping[str, object],
    env: Mapping[str, str],
    file: Mapping[str, object],
    file_source: str = "config file",
) -> dict[str, object]:
    """Each option: flag > environment > file > default, parsed (keyed by flag; None: unset).
    ConfigError names the source of a value that does not parse, or the missing option."""
    values: dict[str, object] = {}
    for option in options:
        from_text = True
        if option.flag in flags:
            raw, source = flags[option.flag], _flag_name(option)
            from_text = option.kind != REPEAT  # argparse gives a repeatable flag's list
        elif option.env in env:
            raw, source = env[option.env], option.env
        elif option.flag in file:
            raw, source, from_text = file[option.flag], f"{file_source}: {option.flag}", False
        elif option.required:
            raise ConfigError(
                f"missing {_flag_name(option)} (or {option.env}, or {option.flag} in the --config file)"
            )
        elif option.default is None:
            values[option.flag] = None
            continue
        else:
            raw, source = option.default, f"default of {_flag_name(option)}"
        try:
            values[option.flag] = parse_given(option, raw, from_text=from_text)
        except ValueError as e:
            raise ConfigError(f"{source}: {e}") from None
    return values


def _flag_name(option: Option) -> str:
    return (option.metavar or option.flag.upper()) if option.positional else f"--{option.flag}"


def file_values(
    document: Mapping[str, Any],
    subcommand: Subcommand,
    tables: frozenset[str],
    known_keys: frozenset[str],
    source: str,
) -> dict[str, object]:
    """The TOML document's values for ``subcommand``, keyed by flag: top-level keys, then its
    table's. A key no subcommand knows is refused; a key of another subcommand, or another
    table, is left to it."""
    values: dict[str, object] = {}
    table: Mapping[str, Any] = {}
    for key, value in document.items():
        if key in tables:
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: [{key}] must be a table")
            if key == subcommand.table:
                table = value
            continue
        _put_file_value(values, key, value, source, known_keys)
    for key, value in table.items():
        _put_file_value(values, key, value, f"{source} [{subcommand.table}]", known_keys)
    wanted = {o.flag for o in subcommand.options}
    return {k: v for k, v in values.items() if k in wanted}


def _put_file_value(
    values: dict[str, object], key: str, value: object, source: str, known_keys: frozenset[str]
) -> None:
    flag = key.replace("_", "-")
    if flag not in known_keys:
        raise ConfigError(f"{source}: unknown key {key!r}")
    values[flag] = value


def help_text(option: Option) -> str:
    """An option's ``--help`` line: its help, then its default (or "required") and variable."""
    parts = [option.help]
    if option.required:
        parts.append("required")
    elif isinstance(option.default, bool):
        parts.append(f"default: {str(option.default).lower()}")
    elif option.default is not None:
        parts.append(f"default: {option.default}")
    parts.append(f"env {option.env}")
    return f"{parts[0]} ({'; '.join(parts[1:])})"
