"""The files of ``deploy/monitoring/`` read for the tests: the dashboard's and the rules' PromQL
expressions, the metric names they query, and the controller's own metric names."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import aiohttp
import yaml
from prometheus_client import CollectorRegistry

from reassignd.zk.server import free_port

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


class PrometheusServer:
    """A Prometheus server from Debian's package scraping ``targets`` every second, with the alert
    rules loaded, on a free loopback port; its TSDB and log under ``work``. ``stop()`` (also on
    leaving the ``with``) terminates it, then kills it if it lingers."""

    def __init__(self, binary: str, work: Path, targets: list[str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = work / "prometheus.log"
        config = work / "prometheus.yml"
        config.write_text(
            yaml.safe_dump(
                {
                    "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
                    "rule_files": [str(RULES)],
                    "scrape_configs": [{"job_name": "reassignd", "static_configs": [{"targets": targets}]}],
                }
            )
        )
        self._log = self.log_path.open("ab")
        self.popen = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={work / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=15)
        self._log.close()

    def __enter__(self) -> PrometheusServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    async def get(self, path: str, **params: str) -> Any:
        """``GET path`` of the HTTP API: its ``data``, or AssertionError on an error answer."""
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session,
            session.get(self.url + path, params=params) as resp,
        ):
            answer = await resp.json()
        assert resp.status == 200 and answer["status"] == "success", answer
        return answer["data"]

    async def ready(self) -> bool:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session,
            session.get(self.url + "/-/ready") as resp,
        ):
            return resp.status == 200

    async def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's series (empty: no data)."""
        data = await self.get("/api/v1/query", query=expr)
        result: list[dict[str, Any]] = data["result"]
        return result
