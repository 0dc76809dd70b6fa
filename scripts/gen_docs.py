"""Writes the generated references in docs/: the HTTP API (docs/http-api.md, from the OpenAPI
document the controller serves) and the command line (docs/cli.md, from the argparse parsers).

    .venv/bin/python scripts/gen_docs.py          # regenerate both
    .venv/bin/python scripts/gen_docs.py --check  # exit 1 when a file differs from the code

tests/unit/test_docs.py runs the check, so a changed flag or endpoint without regenerated docs
fails the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
WIDTH = "100"  # argparse wraps help to $COLUMNS

HTTP_HEADER = """# HTTP API reference

Generated from the OpenAPI document the controller serves at `GET /v1/openapi.json`
(`scripts/gen_docs.py`; do not edit by hand). Every route takes `Authorization: Bearer <token>`
when the controller runs with `--auth-tokens`: the viewer role may call every GET, the admin role
everything. Errors have one shape, `{"error_code", "error_name", "error_message"}`, with Kafka's
codes (a request HTTP cannot read, such as a request line over 8 KiB, too: 400, error 42); a standby answers data routes 503 with error 41 NOT_CONTROLLER and the active
controller's address.
"""

CLI_HEADER = """# Command line reference

Generated from the declarations of every subcommand (`scripts/gen_docs.py`; do not edit by hand).
One engine reads them all: every option can also come from the environment (`REASSIGND_<FLAG>`,
upper case, `-` as `_`) or from a TOML file given with `--config` (or `REASSIGND_CONFIG`): its
top-level keys, then the table of the subcommand's first word (`[controller]`, `[broker]`,
`[cluster]`, `[admin]`, `[feed]`, `[events]`). A flag wins over the environment, which wins over
the file; a file key no subcommand knows is refused. What one run does (a verb, a plan or batch
file, a batch id, the partitions to elect) is given on the command line only.
"""


def _schema_name(schema: dict[str, Any]) -> str:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return ref.rsplit("/", 1)[-1]
    if "anyOf" in schema:  # a nullable field of the generated schemas: "X or null"
        return " or ".join(_schema_name(s) for s in schema["anyOf"])
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind == "array":
        return f"array of {_schema_name(schema.get('items', {}))}"
    return str(kind)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def http_reference() -> str:
    from reassignd.http.openapi import openapi_document  # noqa: PLC0415

    doc = openapi_document()
    out = [HTTP_HEADER]
    info = doc["info"]["description"]
    out.append(f"{info}\n")
    for path, item in doc["paths"].items():
        for method, op in item.items():
            out.append(f"## `{method.upper()} {path}`\n")
            title = op.get("summary", "")
            title = title[:1].upper() + title[1:]
            out.append(f"{title}." if title and not title.endswith(".") else title)
            if op.get("description"):
                out.append(f"\n{op['description']}")
            out.append("")
            params = op.get("parameters", [])
            if params:
                out.append("| parameter | in | required | type | description |")
                out.append("| --- | --- | --- | --- | --- |")
                for p in params:
                    out.append(
                        f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'} | "
                        f"{_schema_name(p.get('schema', {}))} | {_cell(p.get('description', ''))} |"
                    )
                out.append("")
            body = op.get("requestBody")
            if body:
                for media, content in body.get("content", {}).items():
                    out.append(f"Request body: `{media}`, {_schema_name(content.get('schema', {}))}.\n")
            out.append("| status | meaning | body |")
            out.append("| --- | --- | --- |")
            for status, answer in op.get("responses", {}).items():
                shapes = ", ".join(
                    f"{_schema_name(c.get('schema', {}))} (`{m}`)"
                    for m, c in answer.get("content", {}).items()
                )
                out.append(f"| {status} | {_cell(answer.get('description', ''))} | {shapes} |")
            out.append("")
    out.append("## Schemas\n")
    out.append("The bodies named above, as JSON Schema (the served document has them in full).\n")
    for name, schema in doc["components"]["schemas"].items():
        out.append(f"### {name}\n")
        if schema.get("description"):
            out.append(f"{schema['description']}\n")
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        if props:
            out.append("| field | type | required | description |")
            out.append("| --- | --- | --- | --- |")
            for field, spec in props.items():
                out.append(
                    f"| `{field}` | {_cell(_schema_name(spec))} | {'yes' if field in required else 'no'} | "
                    f"{_cell(spec.get('description', ''))} |"
                )
            out.append("")
    return "\n".join(out).rstrip() + "\n"


@contextlib.contextmanager
def _columns() -> Iterator[None]:
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help_section(title: str, parser: argparse.ArgumentParser) -> list[str]:
    return [f"## `{title}`\n", "```text", parser.format_help().rstrip(), "```", ""]


def _tree(title: str, parser: argparse.ArgumentParser) -> list[str]:
    """``parser``'s help, then each subcommand's, depth first."""
    out = _help_section(title, parser)
    for name, sub in _subparsers(parser).items():
        out += _tree(f"{title} {name}", sub)
    return out


def cli_reference() -> str:
    from reassignd import config  # noqa: PLC0415

    out = [CLI_HEADER]
    with _columns():
        out += _tree("reassignd", config.build_parser())
    return "\n".join(out).rstrip() + "\n"


GENERATED = {"http-api.md": http_reference, "cli.md": cli_reference}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name, make in GENERATED.items():
        path = DOCS / name
        text = make()
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        print(f"docs out of date: {', '.join(stale)}; run: python scripts/gen_docs.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
