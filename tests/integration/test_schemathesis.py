"""Schemathesis against a real controller: the OpenAPI document it serves drives generated
requests — schema-valid and schema-violating — at every operation, and no answer may be a 5xx.

One controller (with a tokens file, so authentication is exercised too) and a three-broker
``reassignd cluster`` run on the test ZooKeeper; a topic is created first so the cluster is not
empty. Examples per operation are bounded to keep the whole test well under a minute.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import CheckFunction, not_a_server_error
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
MAX_EXAMPLES = 25  # per operation and generation mode
REQUEST_TIMEOUT_S = 20.0

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


def fuzz(url: str) -> list[str]:
    """Run every operation, positive then negative; the failures, one line each."""
    schema = schemathesis.openapi.from_url(f"{url}/v1/openapi.json", headers=_auth())
    failures: list[str] = []
    session = requests.Session()
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=MAX_EXAMPLES,
                deadline=None,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            )
            def call(case: schemathesis.Case) -> None:
                response = case.call(
                    base_url=url, session=session, headers=_auth(), timeout=REQUEST_TIMEOUT_S
                )
                case.validate_response(response, checks=CHECKS, headers=_auth())

            try:
                call()
            except Unsatisfiable:  # nothing to negate (no parameters, no body)
                assert mode is GenerationMode.NEGATIVE
            except (FailureGroup, Exception) as e:  # a check failed: go on, report all at the end
                failures.append(f"{operation.label} ({mode.value}): {type(e).__name__}: {str(e)[:2000]}")
    return failures


def _auth() -> dict[str, Any]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}", "X-Client-Id": "schemathesis"}


async def get(url: str) -> Any:
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session,
        session.get(url, headers=_auth()) as resp,
    ):
        return await resp.json() if resp.status == 200 else None


async def start(procs: Procs, tmp_path: Path) -> ControllerProc:
    """An active controller with brokers 1, 2 and 3 registered."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    controller = procs.controller(9000, 2.0, "--auth-tokens", str(tokens))
    procs.cluster(3)

    async def ready() -> bool:
        status = await get(f"{controller.url}/v1/status")
        return bool(status and status["active"] and status["brokers"]["live"] == [1, 2, 3])

    await eventually(ready, what="an active controller with brokers 1, 2, 3")
    return controller


async def test_no_generated_request_gets_a_server_error(procs: Procs, tmp_path: Path) -> None:
    controller = await start(procs, tmp_path)
    created = await asyncio.to_thread(
        requests.post,
        f"{controller.url}/v1/topics",
        json={"topics": [{"name": "orders", "num_partitions": 3, "replication_factor": 2}]},
        headers=_auth(),
        timeout=REQUEST_TIMEOUT_S,
    )
    assert created.status_code == 200 and created.json()["topics"][0]["error_code"] == 0, created.text
    failures = await asyncio.to_thread(fuzz, controller.url)
    assert controller.proc.alive, controller.proc.log()[-5000:]
    assert failures == [], "\n\n".join(failures)
