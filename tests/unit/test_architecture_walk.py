"""docs/architecture.md's walk of one ``POST /v1/reassignments`` matches the code: every module it
names exists, each step's module reaches the next one's (an import, or one of the seams named
below, each checked for what it claims), and every other module a step names is imported by the
step's own module. A renamed, moved or re-wired module fails here until the walk is redone."""

from __future__ import annotations

import ast
import importlib
import itertools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
MODULE_PATH = re.compile(r"`(reassignd/[\w/]+\.py)`")
STEP = re.compile(r"^\d+\. ")


@dataclass(frozen=True)
class Via:
    """A reaches B through one module in between: A imports ``middle``, which imports B (the HTTP
    app's key typed with the port; ``Shared.queue``; ``ActiveParts.intake``)."""

    middle: str
    why: str


@dataclass(frozen=True)
class Implements:
    """A holds a ``Protocol`` (defined in ``port_module``, which is A or a module A imports) and B
    defines the class the composition hands it: every member of the protocol is one of the
    class's."""

    port_module: str
    protocol: str
    implementation: str


@dataclass(frozen=True)
class Consumed:
    """A is a queue that B takes from: B imports A (the queue knows no consumer)."""


@dataclass(frozen=True)
class Wire:
    """A and B are the two ends of a network request: both import its wire format."""

    wire_module: str


Seam = Via | Implements | Consumed | Wire

# Every step of the walk that is not an import, and how it is reached. A pair not here must be an
# import; a seam here that the walk no longer takes is reported too (it would hide a wrong walk).
SEAMS: dict[tuple[str, str], Seam] = {
    ("reassignd/http/routes/reassignments.py", "reassignd/controller/api/port.py"): Via(
        "reassignd/http/keys.py", "the app key VIEW is typed with the port"
    ),
    ("reassignd/controller/api/port.py", "reassignd/controller/api/controller_api.py"): Implements(
        "reassignd/controller/api/port.py", "ControllerView", "ControllerApi"
    ),
    ("reassignd/controller/api/controller_api.py", "reassignd/controller/instance/event_queue.py"): Via(
        "reassignd/controller/instance/shared.py", "Shared.queue"
    ),
    (
        "reassignd/controller/instance/event_queue.py",
        "reassignd/controller/runtime/controller.py",
    ): Consumed(),
    ("reassignd/controller/runtime/dispatch.py", "reassignd/controller/reassignment/intake.py"): Via(
        "reassignd/controller/runtime/active.py", "ActiveParts.intake"
    ),
    (
        "reassignd/controller/effects/event_outputs.py",
        "reassignd/controller/effects/writer.py",
    ): Implements("reassignd/controller/effects/fenced_writes.py", "FencedWrites", "ZkWriter"),
    ("reassignd/controller/effects/writer.py", "reassignd/zk/client.py"): Implements(
        "reassignd/controller/effects/writer.py", "FencedMulti", "ZkClient"
    ),
    ("reassignd/controller/instance/shared.py", "reassignd/controller/instance/channel.py"): Implements(
        "reassignd/controller/instance/shared.py", "BrokerChannel", "ControlChannel"
    ),
    ("reassignd/controller/instance/channel.py", "reassignd/broker/control.py"): Wire(
        "reassignd/control/protocol.py"
    ),
}


def module_name(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def module_file(name: str) -> Path | None:
    base = ROOT / Path(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports(path: str) -> set[str]:
    """The modules of the package ``path`` imports (``from a import b`` counts ``a`` and, when it
    is a module, ``a.b``), at any depth of the file (a lazy import counts)."""
    tree = ast.parse((ROOT / path).read_text(), filename=path)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("reassignd") and module_file(name) is not None}


def imports_module(importer: str, imported: str) -> bool:
    return module_name(imported) in imports(importer)


def protocol_members(module: str, protocol: str) -> set[str]:
    cls = getattr(importlib.import_module(module_name(module)), protocol)
    return {
        name
        for klass in cls.__mro__
        if klass.__module__ == cls.__module__
        for name in vars(klass)
        if not name.startswith("_")
    }


def reached(a: str, b: str, seam: Seam | None) -> str | None:
    """None when ``a`` reaches ``b`` as the seam (or, with none, an import) says; else why not."""
    match seam:
        case None:
            return None if imports_module(a, b) else f"{a} does not import {b} (and no seam is named)"
        case Via(middle=middle):
            if not imports_module(a, middle):
                return f"{a} does not import {middle}"
            return None if imports_module(middle, b) else f"{middle} does not import {b}"
        case Implements(port_module=port, protocol=protocol, implementation=implementation):
            if a != port and not imports_module(a, port):
                return f"{a} neither defines nor imports {port}, where {protocol} is"
            cls = getattr(importlib.import_module(module_name(b)), implementation, None)
            if cls is None:
                return f"{b} defines no {implementation}"
            missing = sorted(m for m in protocol_members(port, protocol) if not hasattr(cls, m))
            return f"{implementation} lacks {missing} of {protocol}" if missing else None
        case Consumed():
            return None if imports_module(b, a) else f"{b} does not import the queue {a}"
        case Wire(wire_module=wire):
            ends = [end for end in (a, b) if not imports_module(end, wire)]
            return f"{ends} do not import the wire format {wire}" if ends else None


def walk_legs(text: str) -> list[list[list[str]]]:
    """The walk's numbered lists (legs), each a list of steps, each the module paths it names in
    order (the step's own module first)."""
    section = text.split("\n## The walk: ", 1)[1].split("\n## ", 1)[0]
    legs: list[list[list[str]]] = []
    step: list[str] | None = None
    for line in section.splitlines():
        if STEP.match(line):
            if not legs or line.startswith("1. "):
                legs.append([])
            step = []
            legs[-1].append(step)
        elif not line.startswith("   "):
            step = None
            continue
        if step is not None:
            step.extend(MODULE_PATH.findall(line))
    return legs


def test_the_walk_names_the_modules_of_a_reassignment_from_the_route_to_the_broker() -> None:
    legs = walk_legs(PAGE.read_text())
    steps = [step for leg in legs for step in leg]
    assert len(legs) == 2 and all(step for step in steps), legs
    firsts = [step[0] for step in steps]
    assert firsts[0] == "reassignd/http/routes/reassignments.py"
    for part in ("reassignd/zk/client.py", "reassignd/controller/effects/writer.py"):
        assert part in firsts, f"the walk passes {part}"
    assert firsts[-1].startswith("reassignd/broker/")


def test_every_module_the_walk_names_exists() -> None:
    text = PAGE.read_text()
    named = {path for leg in walk_legs(text) for step in leg for path in step}
    assert [path for path in sorted(named) if not (ROOT / path).is_file()] == []
    # a module named by its path inside the package (`service.py`, `testing/controller.py`), and
    # this test
    section = text.split("\n## The walk: ", 1)[1].split("\n## ", 1)[0]
    short = set(re.findall(r"`([\w/]+\.py)`", section)) - named
    assert short, "the walk names the composition roots"
    missing = [
        path
        for path in sorted(short)
        if not (ROOT / path if path.startswith("tests/") else ROOT / "reassignd" / path).is_file()
    ]
    assert missing == []


def test_each_step_reaches_the_next() -> None:
    problems = []
    used = set()
    for leg in walk_legs(PAGE.read_text()):
        for here, there in itertools.pairwise(leg):
            pair = (here[0], there[0])
            used.add(pair)
            why = reached(*pair, SEAMS.get(pair))
            if why is not None:
                problems.append(why)
    assert problems == []
    assert sorted(set(SEAMS) - used) == [], "a seam the walk no longer takes"


def test_every_other_module_a_step_names_is_imported_by_the_steps_module() -> None:
    problems = [
        f"{step[0]} does not import {other}"
        for leg in walk_legs(PAGE.read_text())
        for step in leg
        for other in step[1:]
        if other != step[0] and not imports_module(step[0], other)
    ]
    assert problems == []


@pytest.mark.parametrize(
    ("a", "b", "seam"),
    [
        ("reassignd/controller/instance/event_queue.py", "reassignd/controller/runtime/dispatch.py", None),
        (
            "reassignd/controller/runtime/dispatch.py",
            "reassignd/controller/instance/event_queue.py",
            Consumed(),
        ),
        (
            "reassignd/controller/instance/shared.py",
            "reassignd/controller/effects/writer.py",
            Implements("reassignd/controller/instance/shared.py", "BrokerChannel", "ZkWriter"),
        ),
        (
            "reassignd/http/routes/reassignments.py",
            "reassignd/zk/client.py",
            Via("reassignd/http/keys.py", ""),
        ),
        ("reassignd/zk/client.py", "reassignd/broker/control.py", Wire("reassignd/control/protocol.py")),
    ],
)
def test_the_check_refuses_what_is_not_connected(a: str, b: str, seam: Seam | None) -> None:
    assert reached(a, b, seam) is not None


def diagram_layers(text: str) -> list[set[str]]:
    """The package layers of architecture.md's diagram, top down: a row per layer (a row whose
    entries end with ``|`` goes on on the next line)."""
    block = text.split("\n## Packages\n", 1)[1].split("```\n", 2)[1]
    layers: list[set[str]] = []
    going_on = False
    for line in block.splitlines():
        entries = re.sub(r"\(.*\)", "", line[25:]).strip()
        if not entries:
            continue
        names = {e.strip().removesuffix("/").removesuffix(".py") for e in entries.split("|") if e.strip()}
        if going_on:
            layers[-1] |= names
        else:
            layers.append(names)
        going_on = entries.endswith("|")
    return layers


def test_the_layer_diagram_is_the_import_linter_contract() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(
        c for c in config["tool"]["importlinter"]["contracts"] if c.get("containers") == ["reassignd"]
    )
    expected = [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]
    assert diagram_layers(PAGE.read_text()) == expected
