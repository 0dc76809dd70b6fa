"""The package's layers, checked on the source: lower layers never import upper ones (so the
controller runs without the HTTP layer, the pure parts without I/O, and the controller image
without Spark)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "reassignd"

# package -> the reassignd packages it must never import
FORBIDDEN = {
    "controller": (
        "reassignd.http",
        "reassignd.admin",
        "reassignd.feeder",
        "reassignd.demo",
        "reassignd.service",
    ),
    "executor": (
        "reassignd.controller",
        "reassignd.http",
        "reassignd.admin",
        "reassignd.feeder",
        "reassignd.zk.client",
    ),
    "zk": ("reassignd.controller", "reassignd.http", "reassignd.executor", "reassignd.broker"),
    "quotas": ("reassignd.controller", "reassignd.http"),
    "events": ("reassignd.http", "reassignd.admin", "reassignd.feeder"),
    "control": ("reassignd.controller", "reassignd.broker", "reassignd.http", "reassignd.zk"),
    "broker": ("reassignd.controller", "reassignd.http", "reassignd.feeder"),
    # (admin still shares the HTTP layer's strict JSON readers and the controller's pure topic
    # validation: one owner for each is to come)
    "admin": ("reassignd.feeder", "reassignd.controller.controller", "reassignd.http.routes"),
}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_layer_never_imports_the_layers_above_it(package: str) -> None:
    bad = [
        f"{path.relative_to(PACKAGE.parent)} imports {name}"
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for name in sorted(imports_of(path))
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[package])
    ]
    assert bad == []


def test_only_the_spark_job_imports_pyspark() -> None:
    users = sorted(
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if any(name.split(".")[0] == "pyspark" for name in imports_of(path))
    )
    assert users and all(u.startswith("reassignd/feeder/") for u in users), users
