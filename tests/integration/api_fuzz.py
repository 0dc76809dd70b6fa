"""Schemathesis against a running controller, shared by ``test_schemathesis.py`` (bounded runs) and
``scripts/fuzz_api.py`` (long ones): the OpenAPI document it serves drives generated requests —
schema-valid and schema-violating — at every operation, in schemathesis' three phases:

- **coverage**: every boundary value, type violation and missing field, deterministically;
- **fuzzing**: Hypothesis examples per operation, positive and negative;
- **stateful**: sequences of calls that follow the document's links (a created topic's name to
  its describe and delete, a submitted batch's id to its pause, resume, stop and rollback, a
  listed broker to its demotion), so answers are checked on things that exist.

Every answer must be what the document says (status, media type, headers, body — each event of
``GET /v1/events`` against the event schema), no answer may be a 5xx, authentication must not be
ignored, and other methods must get 405. Requests carry an admin token.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis.errors import FlakyStrategyDefinition, Unsatisfiable
from hypothesis.stateful import run_state_machine_as_test
from schemathesis import GenerationMode, auths
from schemathesis.checks import CheckFunction, not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.core.result import Ok
from schemathesis.errors import FailureGroup
from schemathesis.generation.stateful.state_machine import StepInput, StepOutput
from schemathesis.openapi.checks import RejectedPositiveData
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    ignored_auth,
    missing_required_header,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

ADMIN_TOKEN = "schemathesis-admin"
TOKENS = f"""
[tokens."{ADMIN_TOKEN}"]
user = "fuzzer"
role = "admin"
"""
# A stream ends only when asked to: every call of it is sent with this ``max_s`` (whatever was
# generated), so its events arrive and are checked, and the call returns.
STREAM = "/v1/events"
STREAM_MAX_S = "0.1"
MAX_EXAMPLES = 25  # Hypothesis examples per operation and generation mode
# operations whose every accepted call costs seconds by design: a hand-over waits up to a second
# for a standby to win (there is none here) before the instance takes the role again
FEW_EXAMPLES = {"/v1/controller/resign": 5}
REQUEST_TIMEOUT_S = 10.0
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)


@dataclass(frozen=True)
class BeyondSchema:
    """A rule of a request body that JSON Schema cannot state (two members compared, a name unique
    across the objects of a list): the document states it in words (``stated``, in a description
    of the operation's request schema) and the server refuses a body breaking it with 400 and
    error 42 whose message holds ``refusal``."""

    operation: str
    stated: str
    refusal: str


BEYOND_SCHEMA = (
    BeyondSchema("POST /v1/batches", "a partition listed twice", "is listed twice"),
    BeyondSchema("POST /v1/batches", "max below min is refused", "must be at least min"),
    BeyondSchema("POST /v1/batches", "as many as its replicas", "dirs for"),
    BeyondSchema("POST /v1/batches", "at most 255 bytes in UTF-8", "bytes in UTF-8"),
    BeyondSchema("POST /v1/reassignments", "a partition given twice", "duplicate topic partitions"),
    BeyondSchema(
        "POST /v1/reassignments",
        "log_dirs of another length than replicas",
        "is different from size of log dirs list",
    ),
    BeyondSchema("POST /v1/log-dirs/moves", "each replica named once", "a replica is moved to one dir"),
)


def positive_data_accepted(ctx: Any, response: Any, case: Case) -> bool | None:
    """Schemathesis' ``positive_data_acceptance`` (ST202: a body the schema accepts must not be
    refused), but for the rules of ``BEYOND_SCHEMA``: a 400 that names the operation's rule is
    the documented answer to a schema-valid body that breaks it."""
    try:
        return positive_data_acceptance(ctx, response, case)
    except RejectedPositiveData:
        if response.status_code == 400 and _refused_by_a_stated_rule(case.operation.label, response):
            return None
        raise


def _refused_by_a_stated_rule(operation: str, response: Any) -> bool:
    try:
        error = response.json()
    except ValueError:
        return False
    if not isinstance(error, dict) or error.get("error_code") != 42:
        return False
    message = str(error.get("error_message", ""))
    return any(r.operation == operation and r.refusal in message for r in BEYOND_SCHEMA)


# Any 5xx fails; the answers must also be what the document says (status, media type, headers,
# body), authentication must not be ignored, other methods must get 405 with an ``Allow`` that
# lists the path's documented methods (on /v1/topics/delete too, which /v1/topics/{topic} would
# match), a request the schema accepts must not be refused (2.0 where an integer goes is 2; a 400
# is an answer only for a rule of ``BEYOND_SCHEMA``), and a request it refuses must be refused
# (the credentials are schemathesis' own, so it knows when a case goes without them).
CHECKS: list[CheckFunction] = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    ignored_auth,
    missing_required_header,
    unsupported_method,
    allow_header_conformance,
    positive_data_accepted,
    negative_data_rejection,
]

# Counts whose topic znode cannot fit are refused at once (37 INVALID_PARTITIONS) and are sent;
# counts in between are valid and would only make the run slow (tens of thousands of state
# znodes per example), so they are not sent (fuzzing) or are lowered to the most that is
# (stateful: a step cannot be skipped).
MAX_PARTITIONS_SENT = 100
REFUSED_AT_ONCE_FROM = 200_000
_COUNTS = ("num_partitions", "count")


def asks_for_huge_topics(body: Any) -> bool:
    if isinstance(body, dict):
        return any(
            (key in _COUNTS and _huge(value)) or asks_for_huge_topics(value) for key, value in body.items()
        )
    if isinstance(body, list):
        return any(asks_for_huge_topics(value) for value in body)
    return False


def tamed(body: Any) -> Any:
    """``body`` with every huge count lowered to ``MAX_PARTITIONS_SENT``."""
    if isinstance(body, dict):
        return {k: MAX_PARTITIONS_SENT if k in _COUNTS and _huge(v) else tamed(v) for k, v in body.items()}
    if isinstance(body, list):
        return [tamed(v) for v in body]
    return body


def _huge(value: Any) -> bool:
    return _number(value) and MAX_PARTITIONS_SENT < value < REFUSED_AT_ONCE_FROM


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


Operation = schemathesis.APIOperation[Any, Any, Any, Any]
Case = schemathesis.Case[Any]


class ControllerUnresponsive(Exception):
    """A request got no answer: the controller is hung or gone, so the run stops."""


# Sent with every call. The token is not: schemathesis puts it on the cases it generates, from its
# own auth config (``load``), and leaves it off where a negative case removes or spoils it, so
# ``negative_data_rejection`` sees the requests it made.
CLIENT_ID = {"X-Client-Id": "schemathesis"}


def auth() -> dict[str, Any]:
    """The headers of a request made here by hand: the admin token and the client id."""
    return {"Authorization": f"Bearer {ADMIN_TOKEN}", **CLIENT_ID}


def _headers(case: Case) -> dict[str, Any]:
    """A case schemathesis generated carries its own credentials; one built by hand gets ours."""
    return CLIENT_ID if case.meta is not None else auth()


def bounded(case: Case) -> None:
    """A call of the stream ends after ``STREAM_MAX_S``; a negative case's ``max_s`` that the
    schema refuses is sent as generated (the stream refuses it with 400)."""
    if case.path == STREAM:
        query = case.query if isinstance(case.query, dict) else {}
        negative = case.meta is not None and case.meta.generation.mode.is_negative
        if negative and "max_s" in query and not _valid_seconds(query["max_s"]):
            return
        case.query = {**query, "max_s": STREAM_MAX_S}


def _valid_seconds(value: Any) -> bool:
    """What the document's ``max_s`` takes: one number in (0, 86400]."""
    if isinstance(value, list | dict | bool) or value is None:
        return False
    try:
        seconds = float(value)
    except ValueError:
        return False
    return 0 < seconds <= 86_400


@dataclass
class Tally:
    """What a run did: calls made by phase, and seconds spent waiting for answers by operation."""

    calls: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def count(self, phase: str) -> None:
        self.calls[phase] = self.calls.get(phase, 0) + 1

    def took(self, operation: str, seconds: float) -> None:
        self.seconds[operation] = self.seconds.get(operation, 0.0) + seconds

    def slowest(self, n: int = 5) -> list[tuple[str, float]]:
        return sorted(((k, round(v, 1)) for k, v in self.seconds.items()), key=lambda kv: -kv[1])[:n]


def call_and_check(url: str, session: requests.Session, case: Case, tally: Tally | None = None) -> int:
    """Send ``case`` with the admin token and check the answer; its status. No answer raises
    ControllerUnresponsive, a failed check schemathesis' FailureGroup."""
    bounded(case)
    headers = _headers(case)
    response = _call(case, tally, base_url=url, session=session, headers=headers, timeout=REQUEST_TIMEOUT_S)
    case.validate_response(response, checks=CHECKS, headers=headers)
    return int(response.status_code)


def _call(case: Case, tally: Tally | None, **kwargs: Any) -> Any:
    started = time.monotonic()
    try:
        return case.call(**kwargs)
    except requests.RequestException as e:
        raise ControllerUnresponsive(f"{e}\n{case.as_curl_command(headers=_headers(case))}") from e
    finally:
        if tally is not None:
            tally.took(case.operation.label, time.monotonic() - started)


def load(url: str) -> schemathesis.BaseSchema:
    """The served document, with the admin token as schemathesis' credentials for ``bearerAuth``."""
    config = SchemathesisConfig.from_dict({"auth": {"openapi": {"bearerAuth": {"bearer": ADMIN_TOKEN}}}})
    return schemathesis.openapi.from_url(f"{url}/v1/openapi.json", config=config, headers=auth())


def coverage_cases(schema: schemathesis.BaseSchema, operation: Operation) -> Iterator[Case]:
    """The operation's coverage cases, given the credentials as schemathesis' own runner gives
    them (the coverage phase generates a placeholder token)."""
    config = schema.config.generation_for(operation=operation)
    context = auths.AuthContext(operation=operation, app=None)
    for case in schema.iter_coverage_cases(operation, generation_modes=list(MODES), generation_config=config):
        auths.set_on_generated_case(case, context, None)
        yield case


def fuzz_cases(
    operation: Operation, mode: GenerationMode, run: Callable[[Case], None], max_examples: int
) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=min(FEW_EXAMPLES.get(operation.path, max_examples), max_examples),
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: bounded time
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case: Case) -> None:
        assume(not asks_for_huge_topics(case.body))
        run(case)

    try:
        fuzz()
    except Unsatisfiable:  # nothing to negate: no parameters, no body
        assert mode is GenerationMode.NEGATIVE


def run_all(
    url: str,
    *,
    max_examples: int,
    fuzz_budget_s: float,
    tally: Tally | None = None,
    part: tuple[int, int] = (0, 1),
) -> list[str]:
    """Coverage, then fuzzing, for every operation; the failures, the first per operation and
    phase. Past ``fuzz_budget_s`` the remaining operations get their coverage cases (every
    operation) but no more Hypothesis examples: a slow machine fuzzes less, it never fails for
    being slow. ``part`` ``(i, n)``: only the operations whose index in the document is ``i``
    modulo ``n`` (the ``n`` parts together are every operation, so they can run in parallel)."""
    index, parts = part
    assert 0 <= index < parts, part
    schema = load(url)
    session = requests.Session()
    tally = tally or Tally()
    deadline = time.monotonic() + fuzz_budget_s
    failures: list[str] = []
    for position, result in enumerate(schema.get_all_operations()):
        assert isinstance(result, Ok), result
        if position % parts != index:
            continue
        operation = result.ok()
        phases: list[tuple[str, Callable[[], None]]] = [
            ("coverage", functools.partial(_each, coverage_cases(schema, operation), url, session, tally)),
            *(
                (
                    f"fuzzing, {m.value}",
                    functools.partial(
                        fuzz_cases, operation, m, _counted(url, session, tally, "fuzzing"), max_examples
                    ),
                )
                for m in MODES
            ),
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


def _counted(url: str, session: requests.Session, tally: Tally, phase: str) -> Callable[[Case], None]:
    def run(case: Case) -> None:
        tally.count(phase)
        call_and_check(url, session, case, tally)

    return run


def _each(cases: Iterator[Case], url: str, session: requests.Session, tally: Tally) -> None:
    run = _counted(url, session, tally, "coverage")
    for case in cases:
        if not asks_for_huge_topics(case.body):
            run(case)


def run_stateful(
    url: str,
    *,
    max_examples: int,
    steps: int,
    modes: tuple[GenerationMode, ...] = MODES,
    tally: Tally | None = None,
) -> list[str]:
    """Schemathesis' stateful phase: ``max_examples`` scenarios of up to ``steps`` calls each,
    following the document's links, with cases of ``modes`` (positive only: more calls succeed,
    so more links are followed); the failure (Hypothesis stops at the first), if any."""
    schema = load(url)
    schema.config.generation.update(modes=list(modes))
    session = requests.Session()
    counts = tally or Tally()
    base = schema.as_state_machine()

    class Machine(base):  # type: ignore[misc,valid-type]  # a class schemathesis builds at run time
        def step(self, input: StepInput) -> StepOutput:
            transition = input.transition
            if transition is not None and input.is_applied:  # a value of an earlier answer used
                counts.count(
                    "stateful, documented link" if not transition.is_inferred else "stateful, inferred link"
                )
            return super().step(input)  # type: ignore[no-any-return]

        def before_call(self, case: Case) -> None:
            case.body = tamed(case.body)
            bounded(case)

        def get_call_kwargs(self, case: Case) -> dict[str, Any]:
            return {
                "base_url": url,
                "session": session,
                "headers": _headers(case),
                "timeout": REQUEST_TIMEOUT_S,
            }

        def call(self, case: Case, **kwargs: Any) -> Any:
            counts.count("stateful")
            return _call(case, counts, **kwargs)

        def validate_response(self, response: Any, case: Case, **kwargs: Any) -> None:
            try:
                case.validate_response(response, checks=CHECKS, headers=_headers(case))
            except Exception as e:
                failed.append(f"{case.operation.label}: {type(e).__name__}: {str(e)[:6000]}")
                raise

    # the first failed check as it was seen: Hypothesis replays a failing scenario to report it,
    # and a replay against a server whose state has moved on may draw otherwise and report only
    # that (FlakyStrategyDefinition)
    failed: list[str] = []
    try:
        run_state_machine_as_test(
            Machine,
            settings=settings(
                max_examples=max_examples,
                stateful_step_count=steps,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],  # no shrinking: bounded time
                suppress_health_check=list(HealthCheck),
            ),
        )
    except FlakyStrategyDefinition:
        if failed:
            return [f"stateful: {failed[0]}"]
        # no check failed: a scenario drew otherwise when Hypothesis ran its start again, since
        # the server's answers (which links can be followed) changed meanwhile; the run ends there
        counts.count("stateful, ended: the server's state changed a replayed scenario's draws")
    except (FailureGroup, Exception) as e:
        return [f"stateful: {failed[0] if failed else f'{type(e).__name__}: {str(e)[:6000]}'}"]
    return []
