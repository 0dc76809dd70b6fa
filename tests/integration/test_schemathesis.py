"""Schemathesis against a real controller: the OpenAPI document it serves drives generated
requests — schema-valid and schema-violating — at every operation, and no answer may be a 5xx.

One controller (with a tokens file, so authentication is exercised too) and a three-broker
``reassignd cluster`` run on the test ZooKeeper; a topic is created first so the cluster is not
empty. Each operation gets schemathesis' coverage cases (every boundary value, type violation
and missing field, deterministically) and then a bounded number of Hypothesis examples, positive
and negative (within a time budget for the fuzzing; the coverage cases always run). Failing
examples are not shrunk, and a controller that stops answering ends the run at once, so the test
stays bounded either way.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import CheckFunction, not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.errors import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    missing_required_header,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from tests.integration.harness import ControllerProc, Procs, eventually

ADMIN_TOKEN = "schemathesis-admin"
TOKENS = f"""
[tokens."{ADMIN_TOKEN}"]
user = "fuzzer"
role = "admin"
"""
# a stream never ends by itself; tests/integration/test_events.py checks its answers and refusals
STREAMS = frozenset({"/v1/events"})
MAX_EXAMPLES = 25  # Hypothesis examples per operation and generation mode
# operations whose every accepted call costs seconds by design: a hand-over waits up to a second
# for a standby to win (there is none here) before the instance takes the role again
FEW_EXAMPLES = {"/v1/controller/resign": 5}
REQUEST_TIMEOUT_S = 10.0
# the fuzzing phases' budget for the whole run: past it, the remaining operations get their
# coverage cases (deterministic, every operation) but no more Hypothesis examples — a slow
# machine fuzzes less, it never fails for being slow
FUZZ_BUDGET_S = 20.0
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)

# Any 5xx fails; the answers must also be what the document says (status, media type, headers,
# body), authentication must not be ignored, and other methods must get 405. Not checked:
# ``positive_data_acceptance`` — schemathesis sends 2.0 where the schema says integer (JSON Schema
# admits it) and the parsers, like Kafka's JSON readers, refuse it with 400 — and
# ``negative_data_rejection``, which cannot tell the credentials added here from its own.
CHECKS: list[CheckFunction] = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    ignored_auth,
    missing_required_header,
    unsupported_method,
]

# Counts whose topic znode cannot fit are refused at once (37 INVALID_PARTITIONS) and are sent;
# counts in between are valid and would only make the run slow (tens of thousands of state
# znodes per example), so they are not sent.
MAX_PARTITIONS_SENT = 100
REFUSED_AT_ONCE_FROM = 200_000


def asks_for_huge_topics(body: Any) -> bool:
    if isinstance(body, dict):
        return any(
            (
                key in ("num_partitions", "count")
                and _number(value)
                and MAX_PARTITIONS_SENT < value < REFUSED_AT_ONCE_FROM
            )
            or asks_for_huge_topics(value)
            for key, value in body.items()
        )
    if isinstance(body, list):
        return any(asks_for_huge_topics(value) for value in body)
    return False


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


Operation = schemathesis.APIOperation[Any, Any, Any, Any]


class ControllerUnresponsive(Exception):
    """A request got no answer: the controller is hung or gone, so the run stops."""


def _auth() -> dict[str, Any]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}", "X-Client-Id": "schemathesis"}


def _checked_call(url: str, session: requests.Session) -> Callable[[schemathesis.Case[Any]], None]:
    def run(case: schemathesis.Case[Any]) -> None:
        try:
            response = case.call(base_url=url, session=session, headers=_auth(), timeout=REQUEST_TIMEOUT_S)
        except requests.RequestException as e:
            raise ControllerUnresponsive(f"{e}\n{case.as_curl_command(headers=_auth())}") from e
        case.validate_response(response, checks=CHECKS, headers=_auth())

    return run


def coverage_cases(schema: schemathesis.BaseSchema, operation: Operation) -> Iterator[schemathesis.Case[Any]]:
    config = schema.config.generation_for(operation=operation)
    yield from schema.iter_coverage_cases(operation, generation_modes=list(MODES), generation_config=config)


def fuzz_cases(
    operation: Operation, mode: GenerationMode, run: Callable[[schemathesis.Case[Any]], None]
) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=FEW_EXAMPLES.get(operation.path, MAX_EXAMPLES),
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: bounded time
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case: schemathesis.Case[Any]) -> None:
        assume(not asks_for_huge_topics(case.body))
        run(case)

    try:
        fuzz()
    except Unsatisfiable:  # nothing to negate: no parameters, no body
        assert mode is GenerationMode.NEGATIVE


def run_all(url: str) -> list[str]:
    """Coverage, then fuzzing, for every operation; the failures, the first per operation and
    phase."""
    schema = schemathesis.openapi.from_url(f"{url}/v1/openapi.json", headers=_auth())
    run = _checked_call(url, requests.Session())
    deadline = time.monotonic() + FUZZ_BUDGET_S
    failures: list[str] = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result
        operation = result.ok()
        if operation.path in STREAMS:
            continue
        phases: list[tuple[str, Callable[[], None]]] = [
            ("coverage", functools.partial(_each, coverage_cases(schema, operation), run)),
            *((f"fuzzing, {m.value}", functools.partial(fuzz_cases, operation, m, run)) for m in MODES),
        ]
        for phase, go in phases:
            label = f"{operation.label} ({phase})"
            if phase != "coverage" and time.monotonic() > deadline:
                continue
            try:
                go()
            except ControllerUnresponsive as e:
                return [*failures, f"{label}: no answer; stopping: {e}"]
            except (FailureGroup, Exception) as e:  # a check failed: go on, report all at the end
                failures.append(f"{label}: {type(e).__name__}: {str(e)[:3000]}")
    return failures


def _each(cases: Iterator[schemathesis.Case[Any]], run: Callable[[schemathesis.Case[Any]], None]) -> None:
    for case in cases:
        if not asks_for_huge_topics(case.body):
            run(case)


async def _get_json(url: str) -> Any:
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session,
        session.get(url, headers=_auth()) as resp,
    ):
        return await resp.json() if resp.status == 200 else None


async def _ready(controller: ControllerProc) -> None:
    async def active_with_brokers() -> bool:
        status = await _get_json(f"{controller.url}/v1/status")
        return bool(status and status["active"] and status["brokers"]["live"] == [1, 2, 3])

    await eventually(active_with_brokers, what="an active controller with brokers 1, 2, 3")


def test_the_huge_topic_guard_sees_every_count() -> None:
    assert asks_for_huge_topics({"topics": [{"name": "t", "num_partitions": 50_000}]})
    assert asks_for_huge_topics({"topics": [{"name": "a"}, {"name": "t", "count": 1e5}]})
    # refused at once by the controller (37), so they are sent
    assert not asks_for_huge_topics({"topics": [{"name": "t", "num_partitions": 2**31 - 1}]})
    assert not asks_for_huge_topics({"topics": [{"name": "t", "num_partitions": 12, "count": True}]})


@pytest.mark.timeout(300)  # the fuzzing's budget, then every operation's coverage cases
def test_no_generated_request_gets_a_server_error(procs: Procs, tmp_path: Path) -> None:
    """Synchronous, so pytest-timeout can interrupt a stuck run in this thread."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    controller = procs.controller(9000, 2.0, "--auth-tokens", str(tokens))
    procs.cluster(3)
    asyncio.run(_ready(controller))
    created = requests.post(
        f"{controller.url}/v1/topics",
        json={"topics": [{"name": "orders", "num_partitions": 3, "replication_factor": 2}]},
        headers=_auth(),
        timeout=REQUEST_TIMEOUT_S,
    )
    assert created.status_code == 200 and created.json()["topics"][0]["error_code"] == 0, created.text

    failures = run_all(controller.url)

    assert controller.proc.alive, controller.proc.log()[-5000:]
    assert failures == [], (
        "\n\n".join(failures) + "\n\ncontroller log (tail):\n" + controller.proc.log()[-3000:]
    )
