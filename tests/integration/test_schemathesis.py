"""Schemathesis against a real controller (``tests/integration/api_fuzz.py``): the OpenAPI document
it serves drives generated requests at every operation, and every answer must be what the
document says.

- coverage and fuzzing, against a controller process (with a tokens file, so authentication is
  exercised too) and a three-broker ``reassignd cluster`` on the test ZooKeeper; the operations
  are split in three parts, each a test with a controller of its own (xdist runs them side by side);
- the stateful phase — call sequences that follow the document's links — against an in-process
  controller and agents (``kit``), bounded to a few short scenarios (``scripts/fuzz_api.py``
  runs all three phases for longer);
- every event of ``GET /v1/events`` matches the event schema the document gives, and a client
  that goes away mid-stream is no error in the controller's log;
- schema-valid bodies with each integer written as a float (2.0) get the answers the integers get;
- a batch's controls: schema-valid calls are answered 200, 404 or 409 (a state that does not
  allow the action), never 400, which the document keeps for what the schema refuses.

Failing examples are not shrunk, and a controller that stops answering ends a run at once, so
each test stays bounded either way.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import jsonschema_rs
import pytest
import requests
from schemathesis import GenerationMode
from schemathesis.core.result import Ok

from reassignd.http.openapi import openapi_document
from reassignd.testing.kit import InProcessCommand
from tests.integration.api_fuzz import (
    BEYOND_SCHEMA,
    REQUEST_TIMEOUT_S,
    TOKENS,
    Tally,
    asks_for_huge_topics,
    auth,
    call_and_check,
    coverage_cases,
    load,
    run_all,
    run_stateful,
    tamed,
)
from tests.integration.harness import ControllerProc, Kit, Procs, eventually

MAX_EXAMPLES = 25
# the operations are split in PARTS, each fuzzed against a controller of its own, in parallel
# under xdist (one test for all of them took 40 s on CI's loaded 2-core machine; of two parts, the
# first took 29-31 s)
PARTS = 3
# the fuzzing phases' budget for the whole run, shared out among the parts (the coverage cases
# always run)
FUZZ_BUDGET_S = 20.0
# the stateful phase in the suite: a few short scenarios (scripts/fuzz_api.py runs more)
STATEFUL_SCENARIOS = 6
STATEFUL_STEPS = 6


def test_the_huge_topic_guard_sees_every_count() -> None:
    assert asks_for_huge_topics({"topics": [{"name": "t", "num_partitions": 50_000}]})
    assert asks_for_huge_topics({"topics": [{"name": "a"}, {"name": "t", "count": 1e5}]})
    # refused at once by the controller (37), so they are sent
    assert not asks_for_huge_topics({"topics": [{"name": "t", "num_partitions": 2**31 - 1}]})
    assert not asks_for_huge_topics({"topics": [{"name": "t", "num_partitions": 12, "count": True}]})
    assert tamed({"topics": [{"name": "t", "num_partitions": 50_000, "count": 3}]}) == {
        "topics": [{"name": "t", "num_partitions": 100, "count": 3}]
    }


def _descriptions(schema: Any, components: dict[str, Any], seen: set[str]) -> Iterator[str]:
    """Every description in ``schema`` and the components it refers to, whitespace made single."""
    if isinstance(schema, dict):
        if isinstance(schema.get("description"), str):
            yield " ".join(schema["description"].split())
        if isinstance(ref := schema.get("$ref"), str) and (name := ref.rsplit("/", 1)[1]) not in seen:
            seen.add(name)
            yield from _descriptions(components[name], components, seen)
        for key, value in schema.items():
            if key != "description":
                yield from _descriptions(value, components, seen)
    elif isinstance(schema, list):
        for value in schema:
            yield from _descriptions(value, components, seen)


def test_every_rule_beyond_the_schema_is_stated_in_the_operations_request_schema() -> None:
    """The fuzzer takes a 400 for a schema-valid body only for a rule the document states."""
    doc = openapi_document()
    assert BEYOND_SCHEMA
    for rule in BEYOND_SCHEMA:
        method, path = rule.operation.split(" ")
        body = doc["paths"][path][method.lower()]["requestBody"]
        stated = list(_descriptions(body, doc["components"]["schemas"], set()))
        assert any(rule.stated in text for text in stated), (rule, stated)


async def _get_json(url: str) -> Any:
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session,
        session.get(url, headers=auth()) as resp,
    ):
        return await resp.json() if resp.status == 200 else None


async def _ready(controller: ControllerProc[Any]) -> None:
    async def active_with_brokers() -> bool:
        status = await _get_json(f"{controller.url}/v1/status")
        return bool(status and status["active"] and status["brokers"]["live"] == [1, 2, 3])

    await eventually(active_with_brokers, what="an active controller with brokers 1, 2, 3")


def _create_orders(url: str) -> None:
    created = requests.post(
        f"{url}/v1/topics",
        json={"topics": [{"name": "orders", "num_partitions": 3, "replication_factor": 2}]},
        headers=auth(),
        timeout=REQUEST_TIMEOUT_S,
    )
    assert created.status_code == 200 and created.json()["topics"][0]["error_code"] == 0, created.text


async def _in_process(kit: Kit, tmp_path: Path) -> ControllerProc[InProcessCommand]:
    """A controller with the tokens file and three brokers, in the test's loop, with ``orders``."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    controller = kit.controller(9000, 2.0, "--auth-tokens", str(tokens))
    kit.cluster(3)
    await _ready(controller)
    await asyncio.to_thread(_create_orders, controller.url)
    return controller


@pytest.mark.timeout(300)  # the fuzzing's budget, then every operation's coverage cases
@pytest.mark.parametrize("part", range(PARTS), ids=lambda i: f"part-{i + 1}-of-{PARTS}")
def test_no_generated_request_gets_a_server_error(procs: Procs, tmp_path: Path, part: int) -> None:
    """Synchronous, so pytest-timeout can interrupt a stuck run in this thread. Every operation
    is in one of the parts."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    controller = procs.controller(9000, 2.0, "--auth-tokens", str(tokens))
    procs.cluster(3)
    asyncio.run(_ready(controller))
    _create_orders(controller.url)

    failures = run_all(
        controller.url,
        max_examples=MAX_EXAMPLES,
        fuzz_budget_s=FUZZ_BUDGET_S / PARTS,
        part=(part, PARTS),
    )

    assert controller.proc.alive, controller.proc.log()[-5000:]
    assert failures == [], (
        "\n\n".join(failures) + "\n\ncontroller log (tail):\n" + controller.proc.log()[-3000:]
    )


@pytest.mark.timeout(120)
async def test_call_sequences_along_the_documents_links_get_documented_answers(
    kit: Kit, tmp_path: Path
) -> None:
    controller = await _in_process(kit, tmp_path)
    tally = Tally()
    started = time.monotonic()

    failures = await asyncio.to_thread(
        functools.partial(
            run_stateful,
            controller.url,
            max_examples=STATEFUL_SCENARIOS,
            steps=STATEFUL_STEPS,
            modes=(GenerationMode.POSITIVE,),  # negative cases: coverage and fuzzing above
            tally=tally,
        )
    )

    assert failures == [], (
        "\n\n".join(failures) + "\n\ncontroller log (tail):\n" + controller.proc.log()[-3000:]
    )
    assert tally.calls.get("stateful", 0) >= STATEFUL_SCENARIOS, tally  # each scenario made calls
    assert tally.calls.get("stateful, documented link", 0) > 0, tally  # the document's links followed
    assert controller.proc.alive
    print(f"stateful: {tally.calls} calls in {time.monotonic() - started:.1f} s; slowest {tally.slowest()}")


def _event_schema(url: str) -> Any:
    doc = requests.get(f"{url}/v1/openapi.json", headers=auth(), timeout=REQUEST_TIMEOUT_S).json()
    content = doc["paths"]["/v1/events"]["get"]["responses"]["200"]["content"]
    return content["text/event-stream"]["schema"]


def _events(text: str) -> list[dict[str, Any]]:
    """The stream's events as an SSE reader sees them (comments skipped)."""
    events = []
    for block in text.split("\n\n"):
        event: dict[str, Any] = {}
        for line in block.splitlines():
            if line.startswith(":") or ":" not in line:
                continue
            name, _, value = line.partition(": ")
            event[name] = value
        if event:
            events.append(event)
    return events


def _floated(value: Any) -> Any:
    """Every integer of ``value`` written as a float (2 → 2.0), those a double holds exactly."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= 2**53:
        return float(value)
    if isinstance(value, list):
        return [_floated(v) for v in value]
    if isinstance(value, dict):
        return {k: _floated(v) for k, v in value.items()}
    return value


INTEGRAL_CASES_PER_OPERATION = 6


def _send_floated(url: str) -> dict[str, list[tuple[int, int]]]:
    """For each operation with a body, its first positive coverage cases that hold an integer,
    sent as generated and with every integer written as 2.0 is (both checked); the two answers'
    statuses by operation."""
    schema = load(url)
    schema.config.generation.update(modes=[GenerationMode.POSITIVE])
    session = requests.Session()
    statuses: dict[str, list[tuple[int, int]]] = {}
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result
        operation = result.ok()
        if operation.body is None or not len(operation.body):
            continue
        sent = statuses.setdefault(operation.label, [])
        for case in coverage_cases(schema, operation):
            if len(sent) == INTEGRAL_CASES_PER_OPERATION:
                break
            if case.meta is None or not case.meta.generation.mode.is_positive:
                continue
            if asks_for_huge_topics(case.body) or json.dumps(_floated(case.body)) == json.dumps(case.body):
                continue  # (2.0 == 2 in Python: compared as JSON)
            as_generated = call_and_check(url, session, case)
            case.body = _floated(case.body)
            sent.append((as_generated, call_and_check(url, session, case)))
    return statuses


@pytest.mark.timeout(120)
async def test_an_integer_written_2_0_is_accepted_where_the_schema_admits_it(
    kit: Kit, tmp_path: Path
) -> None:
    """JSON Schema's integer admits 2.0, and so does every request body: schema-valid bodies of
    every operation with a body, each integer written as a float, get the answer the integers get
    (and pass every check, ``positive_data_acceptance`` among them)."""
    controller = await _in_process(kit, tmp_path)
    statuses = await asyncio.to_thread(_send_floated, controller.url)
    assert len(statuses) == 8, statuses  # the operations with a body
    for operation, pairs in statuses.items():
        assert pairs, operation  # each had schema-valid bodies with integers
        assert all(as_generated == floated for as_generated, floated in pairs), (operation, pairs)


@pytest.mark.timeout(90)
async def test_every_event_of_the_stream_matches_the_documented_event_schema(
    kit: Kit, tmp_path: Path
) -> None:
    """The history from the start (elected, brokers, the topic created...) and a gap event (an
    id from an epoch the history does not hold), each checked by schemathesis against the
    document; the schema is strict enough to refuse an event the server does not send."""
    controller = await _in_process(kit, tmp_path)
    schema = await asyncio.to_thread(load, controller.url)
    operation = schema["/v1/events"]["GET"]
    session = requests.Session()
    for last in ("1-0", "99-5"):
        case = operation.Case(query={"last_event_id": last})
        await asyncio.to_thread(call_and_check, controller.url, session, case)  # raises on a mismatch

    text = await asyncio.to_thread(
        lambda: (
            requests.get(
                f"{controller.url}/v1/events",
                params={"last_event_id": "1-0", "max_s": "0.3"},
                headers=auth(),
                timeout=REQUEST_TIMEOUT_S,
            ).text
        )
    )
    events = _events(text)
    assert {"controller_elected", "topic_created", "audit"} <= {e["event"] for e in events}
    validator = jsonschema_rs.validator_for(await asyncio.to_thread(_event_schema, controller.url))
    for event in events:
        assert validator.is_valid(event), event
        assert json.loads(event["data"])["type"] == event["event"]
    record = events[0]
    assert not validator.is_valid({**record, "event": "message"})  # a type that is no record's
    assert not validator.is_valid({**record, "id": "7"})  # not <epoch>-<sequence>
    assert not validator.is_valid({"event": record["event"]})  # no data


@pytest.mark.timeout(90)
async def test_a_client_that_goes_away_mid_stream_is_no_error_in_the_log(kit: Kit, tmp_path: Path) -> None:
    controller = await _in_process(kit, tmp_path)
    for _ in range(3):
        async with aiohttp.ClientSession() as session:
            resp = await session.get(
                f"{controller.url}/v1/events", params={"heartbeat_s": "0.05"}, headers=auth()
            )
            assert resp.status == 200
            assert (await resp.content.readuntil(b"\n\n")).startswith(b": heartbeat")
            resp.connection.transport.abort()  # type: ignore[union-attr]  # gone, no goodbye
            resp.release()

    def went_away() -> bool:
        return controller.proc.log().count("ended: the client went away") == 3

    await eventually(went_away, what="the controller noticing the three clients left")
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{controller.url}/v1/status", headers=auth()) as status,
    ):
        assert status.status == 200  # still serving
    log = controller.proc.log()
    assert "Traceback" not in log and " ERROR " not in log, log[-5000:]


async def _submit(url: str, body: dict[str, Any]) -> dict[str, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{url}/v1/batches", json=body, headers=auth()) as resp,
    ):
        assert resp.status == 200, await resp.text()
        return dict(await resp.json())


@pytest.mark.timeout(90)
async def test_batch_controls_answer_schema_valid_calls_200_404_or_409_never_400(
    kit: Kit, tmp_path: Path
) -> None:
    """Every schema-valid call of pause, resume and stop on a completed batch, a paused one and
    an unknown id: the parser refuses none of them (400); the batch's state may (409)."""
    controller = await _in_process(kit, tmp_path)
    url = controller.url
    await _submit(url, {"batch_id": "done", "partitions": []})
    schema = await asyncio.to_thread(load, url)
    session = requests.Session()
    seen: dict[tuple[str, str], int] = {}
    for action in ("pause", "resume", "stop"):
        operation = schema[f"/v1/batches/{{batch_id}}/{action}"]["POST"]
        for batch_id in ("done", "no-such-batch", "a" * 249, "..."):
            case = operation.Case(path_parameters={"batch_id": batch_id})
            response = await asyncio.to_thread(
                case.call, base_url=url, session=session, headers=auth(), timeout=REQUEST_TIMEOUT_S
            )
            case.validate_response(response, headers=auth())
            seen[(action, batch_id)] = response.status_code
    assert {code for code in seen.values()} <= {200, 404, 409}, seen
    assert seen[("pause", "done")] == 409 and seen[("pause", "no-such-batch")] == 404, seen
    # what the schema refuses is what the parser refuses: an unknown query parameter (400) and
    # "." or ".." (no client sends them in a path)
    doc = await asyncio.to_thread(
        lambda: requests.get(f"{url}/v1/openapi.json", headers=auth(), timeout=REQUEST_TIMEOUT_S).json()
    )
    for action in ("pause", "resume", "stop"):
        post = doc["paths"][f"/v1/batches/{{batch_id}}/{action}"]["post"]
        [param] = post["parameters"]
        assert "requestBody" not in post
        valid = jsonschema_rs.validator_for(param["schema"])
        assert not valid.is_valid(".") and not valid.is_valid("..") and valid.is_valid("...")
    async with (
        aiohttp.ClientSession() as s,
        s.post(f"{url}/v1/batches/done/pause", params={"force": "1"}, headers=auth()) as resp,
    ):
        assert resp.status == 400


async def _raw_request(url: str, request: bytes) -> tuple[bytes, dict[str, str], bytes]:
    """``request`` as sent on a socket of its own; the answer's status line, headers and body (the
    connection is closed after it)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(request)
        await writer.drain()
        head, _, body = (await reader.read()).partition(b"\r\n\r\n")
    finally:
        writer.close()
    status, *lines = head.decode().split("\r\n")
    headers = {k.lower(): v for k, _, v in (line.partition(": ") for line in lines)}
    return status.encode(), headers, body


@pytest.mark.timeout(90)
async def test_a_request_aiohttp_cannot_parse_is_answered_400_and_no_error_in_the_log(
    kit: Kit, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """What a long fuzzing run sends: a URL over 8 KiB, a NUL in a header value. Answered in the
    uniform error object, as the document says every 400 is."""
    controller = await _in_process(kit, tmp_path)
    long_url = b"GET /v1/log-dirs?" + b"&".join(b"broker=%d" % i for i in range(1500)) + b" HTTP/1.1\r\n\r\n"
    nul = b"GET /v1/status HTTP/1.1\r\nX-Probe: a\x00b\r\n\r\n"
    for raw in (long_url, nul):
        status, headers, body = await _raw_request(controller.url, raw)
        assert b" 400 " in status, raw[:40]
        assert headers["content-type"].startswith("application/json"), headers  # the error object
        error = json.loads(body)
        assert error["error_code"] == 42 and error["error_name"] == "INVALID_REQUEST", error

    def logged() -> bool:
        return sum("malformed request answered 400" in r.getMessage() for r in caplog.records) == 2

    await eventually(logged, what="the two malformed requests logged")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert errors == [], [r.getMessage() for r in errors]
    assert "Traceback" not in controller.proc.log()
