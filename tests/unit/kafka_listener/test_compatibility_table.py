"""docs/kafka-api.md stays true to the listener: its tables list exactly the APIs and versions
the listener advertises in ApiVersions, and every client call the compatibility table names is
made by a test of that client."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any, cast

import pytest
from kafka.protocol.metadata import ApiVersionsRequest

from reassignd.kafka_listener import cluster, protocol
from reassignd.kafka_listener.context import RequestContext
from reassignd.kafka_listener.dispatch import HANDLERS

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "kafka-api.md"
TESTS = ROOT / "tests" / "integration"
ROW = re.compile(r"^\| (?P<name>\w+) \((?P<key>\d+)\) \| (?P<versions>\d+(?:–\d+)?) \|")

# a client's column, and how a test file that drives that client is recognised
CLIENTS = {
    "kafka-python 3.0.12": "admin_client(",
    "aiokafka 0.14": "AIOKafkaAdminClient",
    "confluent-kafka 2.16 (librdkafka)": "confluent_kafka",
    "KafkaJS 2.2.4": "kafkajs(",
}


def section(heading: str) -> list[str]:
    """The lines of the section under ``heading`` (to the next heading of its level or higher)."""
    lines = DOC.read_text().splitlines()
    start = lines.index(heading)
    level = heading.split(" ", 1)[0]
    end = next(
        (
            i
            for i in range(start + 1, len(lines))
            if lines[i].startswith("#") and len(lines[i].split(" ", 1)[0]) <= len(level)
        ),
        len(lines),
    )
    return lines[start + 1 : end]


def table(heading: str) -> tuple[list[str], list[list[str]]]:
    """The first table of a section: its header cells and its rows' cells."""
    rows = [line for line in section(heading) if line.startswith("|")]
    assert len(rows) > 2, f"no table under {heading}"

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    return cells(rows[0]), [cells(r) for r in rows[2:]]


def listed(heading: str) -> set[tuple[str, int, int, int]]:
    """(name, key, min version, max version) of every row of the section's table."""
    out = set()
    for line in (line for line in section(heading) if line.startswith("| ")):
        match = ROW.match(line)
        if match is None:
            continue
        low, _, high = match["versions"].partition("–")
        out.add((match["name"], int(match["key"]), int(low), int(high or low)))
    return out


def advertised() -> set[tuple[str, int, int, int]]:
    """What the listener's ApiVersions handler answers, named as the listener names each API."""
    assert HANDLERS[protocol.API_VERSIONS] is cluster.api_versions  # what the listener dispatches to
    response: Any = asyncio.run(cluster.api_versions(cast(RequestContext, None), ApiVersionsRequest()))
    assert response.error_code == 0
    return {
        (protocol.SERVED[a.api_key].name, a.api_key, a.min_version, a.max_version) for a in response.api_keys
    }


@pytest.mark.parametrize("heading", ["## APIs served", "## Compatibility"])
def test_the_tables_list_exactly_what_api_versions_advertises(heading: str) -> None:
    served = advertised()
    assert len(served) == len(protocol.SERVED)
    documented = listed(heading)
    assert documented == served, (
        f"{heading}: documented but not advertised {sorted(documented - served)}; "
        f"advertised but not documented {sorted(served - documented)}"
    )


def test_every_client_call_the_compatibility_table_names_is_made_by_a_test() -> None:
    header, rows = table("## Compatibility")
    sources = {p: p.read_text() for p in sorted(TESTS.glob("*.py"))}
    for column, marker in CLIENTS.items():
        index = header.index(column)
        driving = [text for text in sources.values() if marker in text]
        assert driving, f"no test drives {column}"
        for row in rows:
            for call in re.findall(r"`(\w+)[^`]*`", row[index]):
                # a Python method is called on a client object; a KafkaJS one is named to admin.js
                made = f".{call}" if column != "KafkaJS 2.2.4" else f'"{call}"'
                assert any(made in text for text in driving), f"{column}: no test calls {call} ({row[0]})"
    # the listing parses: a row per served API
    assert len(rows) == len(protocol.SERVED)
