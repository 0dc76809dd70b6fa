"""The files of ``deploy/monitoring/`` read for the tests: the dashboard's and the rules' PromQL
expressions, the metric names they query, and the controller's own metric names."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from prometheus_client import CollectorRegistry

MONITORING = Path(__file__).resolve().parents[1] / "deploy" / "monitoring"
DASHBOARD_JSON = MONITORING / "reassignd-dashboard.json"
GENERATOR = MONITORING / "dashboard.py"
RULES = MONITORING / "reassignd.rules.yml"
RULES_TEST = MONITORING / "reassignd.rules.test.yml"

# every family of ours is named reassignd_*; a label value or a legend never is
_METRIC = re.compile(r"\breassignd_[a-z0-9_]+")
_QUOTED = re.compile(r'"[^"]*"')
# the sample names a family of each type exposes
_SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "summary": ("", "_count", "_sum", "_created"),
}


@dataclass(frozen=True)
class Expression:
    where: str  # "panel <title> (A)" or "rule <alert>"
    expr: str


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD_JSON.read_text())
    return loaded


def panel_expressions(board: dict[str, Any] | None = None) -> list[Expression]:
    found = []
    for panel in (board or dashboard())["panels"]:
        for target in panel.get("targets") or ():
            found.append(Expression(f"panel {panel['title']!r} ({target['refId']})", target["expr"]))
    return found


def rule_expressions() -> list[Expression]:
    rules = yaml.safe_load(RULES.read_text())
    return [
        Expression(f"rule {rule.get('alert') or rule.get('record')}", rule["expr"])
        for group in rules["groups"]
        for rule in group["rules"]
    ]


def metrics_in(expr: str) -> set[str]:
    """The reassignd_* sample names ``expr`` queries (quoted label values left out)."""
    return set(_METRIC.findall(_QUOTED.sub('""', expr)))


def exported_names(registry: CollectorRegistry) -> set[str]:
    """Every sample name the families of ``registry`` expose, with or without samples yet."""
    return {
        family.name + suffix for family in registry.collect() for suffix in _SUFFIXES.get(family.type, ("",))
    }


def load_generator() -> ModuleType:
    """deploy/monitoring/dashboard.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("reassignd_dashboard", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def promtool() -> str | None:
    return shutil.which("promtool")


def prometheus() -> str | None:
    return shutil.which("prometheus")
