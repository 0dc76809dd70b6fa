"""No test module imports another test module: shared helpers live in helper modules.

import-linter cannot say it (its wildcards replace whole module names, not a ``test_`` prefix), so
this reads every ``tests/**/*.py`` with ``ast``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]


def _is_test_module(dotted: str) -> bool:
    """A module of this test tree named ``test_*`` (not, say, ``aiohttp.test_utils``)."""
    return dotted.split(".", 1)[0] == "tests" and dotted.rsplit(".", 1)[-1].startswith("test_")


def _package_of(path: Path) -> str:
    return ".".join(path.relative_to(TESTS.parent).with_suffix("").parts[:-1])


def _statements(nodes: list[Any]) -> Iterator[ast.AST]:
    """Every statement in ``nodes``, nested ones included: an import is a statement, so the walk
    need not visit the expressions (most of a module's nodes)."""
    for node in nodes:
        yield node
        for field in ("body", "handlers", "orelse", "finalbody", "cases"):
            children = getattr(node, field, None)
            if isinstance(children, list):  # not an expression's body (a lambda, an IfExp)
                yield from _statements(children)


def imports_of_test_modules(path: Path, source: str) -> list[str]:
    """Every import in ``source`` (the file at ``path``) of a ``test_*`` module, as ``line: module``."""
    found = []
    for node in _statements(ast.parse(source, filename=str(path)).body):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: {a.name}" for a in node.names if _is_test_module(a.name)]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # a relative import, resolved against the file's own package
                package = _package_of(path).split(".")
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            if _is_test_module(base):
                found.append(f"{node.lineno}: {base}")
            else:  # `from tests.unit import test_x`
                found += [
                    f"{node.lineno}: {base}.{a.name}"
                    for a in node.names
                    if _is_test_module(f"{base}.{a.name}")
                ]
    return found


def test_no_test_module_imports_another() -> None:
    offenders = [
        f"{path.relative_to(TESTS.parent)}:{found}"
        for path in sorted(TESTS.rglob("*.py"))
        for found in imports_of_test_modules(path, path.read_text())
    ]
    assert offenders == [], (
        "a test module is imported; move what it shares to a helper module:\n" + "\n".join(offenders)
    )


def test_the_check_sees_every_form_of_import() -> None:
    here = TESTS / "unit" / "test_x.py"
    source = "\n".join(
        [
            "import tests.integration.test_reassignment",
            "from tests.unit.test_http_batches import CLUSTER",
            "from tests.unit import test_http_app",
            "from .test_moves import move",
            "from . import test_codec",
            "from tests.integration.harness import Procs",
            "from tests.unit.controller.core_machine import CoreMachine",
            "from aiohttp.test_utils import TestClient",
            "def f():",
            "    try:",
            "        import tests.unit.test_a",
            "    except ImportError:",
            "        import tests.unit.test_b",
            "    else:",
            "        import tests.unit.test_c",
            "    finally:",
            "        import tests.unit.test_d",
            "class C:",
            "    if True:",
            "        import tests.unit.test_e",
            "    else:",
            "        import tests.unit.test_f",
            "match 1:",
            "    case 1:",
            "        with open('x'):",
            "            for _ in ():",
            "                while 1:",
            "                    from tests.unit.test_g import g",
        ]
    )
    assert imports_of_test_modules(here, source) == [
        "1: tests.integration.test_reassignment",
        "2: tests.unit.test_http_batches",
        "3: tests.unit.test_http_app",
        "4: tests.unit.test_moves",
        "5: tests.unit.test_codec",
        *(
            f"{line}: tests.unit.test_{name}"
            for line, name in zip((11, 13, 15, 17, 20, 22), "abcdef", strict=True)
        ),
        "28: tests.unit.test_g",
    ]
