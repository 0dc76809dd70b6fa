"""The repository's docs: the generated references match the code, every page exists, links
resolve, and nothing points outside the repository."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = (
    "README.md",
    "architecture.md",
    "zookeeper-layout.md",
    "design.md",
    "http-api.md",
    "kafka-api.md",
    "cli.md",
    "operations.md",
    "feeder.md",
    "contributing.md",
)
SKIPPED_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".sh", ".js", ".css", ".html", ".cfg", ".txt", ""}
# the team's working spec lives outside the repository; nothing in it may be referred to
OUTSIDE = re.compile(
    r"\.\./" + "shared|" + "shared/" + r"(spec|seeds|tools)|\b(HTTP_API|ZK_LAYOUT|ARCHITECTURE|CONTROLLER|"
    r"BROKERS|QUOTAS|STYLE|CLI)\." + "md"
)


def gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["http-api.md", "cli.md"])
def test_the_generated_references_match_the_code(name: str) -> None:
    generated = gen_docs().GENERATED[name]()
    written = (ROOT / "docs" / name).read_text()
    assert written == generated, f"docs/{name} is stale: run .venv/bin/python scripts/gen_docs.py"


def test_the_references_name_every_route_and_command() -> None:
    from reassignd.http.openapi import openapi_document  # noqa: PLC0415

    api = (ROOT / "docs" / "http-api.md").read_text()
    for path, item in openapi_document()["paths"].items():
        for method in item:
            assert f"## `{method.upper()} {path}`" in api
    cli = (ROOT / "docs" / "cli.md").read_text()
    for command in ("controller", "broker", "cluster", "admin reassign", "admin batch submit", "feed plan"):
        assert f"## `reassignd {command}`" in cli


@pytest.mark.parametrize("page", PAGES)
def test_every_docs_page_exists_and_its_links_resolve(page: str) -> None:
    path = ROOT / "docs" / page
    text = path.read_text()
    assert text.startswith("# ")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (path.parent / target).exists(), f"docs/{page} links to a missing {target}"


def repository_files() -> list[Path]:
    found = []
    for path in ROOT.rglob("*"):
        if any(part in SKIPPED_DIRS for part in path.relative_to(ROOT).parts):
            continue
        if path.is_file() and path.suffix in TEXT_SUFFIXES and path.stat().st_size < 2_000_000:
            found.append(path)
    return found


def test_nothing_in_the_repository_refers_to_files_outside_it() -> None:
    files = repository_files()
    assert any(p.name == "README.md" for p in files)
    bad = []
    for path in files:
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        bad += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
    assert bad == []


def test_the_pattern_finds_what_it_must() -> None:
    assert OUTSIDE.search("see ../" + "shared/" + "spec/CONTROLLER" + ".md")
    assert OUTSIDE.search("as HTTP_API" + ".md says")
    assert not OUTSIDE.search("docs/http-api.md, docs/cli.md")
