"""The OpenAPI document (GET /v1/openapi.json) stays true to the app: the same routes and methods,
a valid OpenAPI 3.1 document, and request-body schemas that accept exactly what the strict
parsers accept (examples, the malformed-body tables of the route tests, and generated bodies)."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, get_args

import jsonschema_rs
import msgspec
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.core.result import Ok
from schemathesis.specs.openapi import definitions

from reassignd.contracts import requests as rq
from reassignd.contracts.requests import PARTITION_KEY_PATTERN
from reassignd.controller.model.requests import AlterReassignments, Requester
from reassignd.errors import InvalidRequest
from reassignd.executor.model import (
    LOG_DIR_MAX,
    PLAN_ID_MAX,
    Adaptive,
    BatchSpec,
    Limits,
    PartitionSpec,
    Strategy,
)
from reassignd.http.app import build_app
from reassignd.http.auth import PUBLIC_PATHS, Principal, Role, required_role
from reassignd.http.batch_requests import STRATEGIES, BatchDefaults, parse_submit_body, parse_submit_doc
from reassignd.http.json_input import decode_body
from reassignd.http.openapi import answer_contracts, openapi_document
from reassignd.http.openapi_components import answer_schemas
from reassignd.http.openapi_schemas import HAND_WRITTEN, SCHEMAS, TOLERANT
from reassignd.http.route_table import OPERATIONS
from reassignd.http.routes.elections import check_elect_body, parse_elect_body
from reassignd.http.routes.log_dirs import check_moves_body, parse_moves_body
from reassignd.http.routes.quotas import check_alter_quotas, parse_alter_quotas
from reassignd.http.routes.reassignments import parse_alter_body, strict_alter_body
from reassignd.http.routes.topics import (
    PARTITION_KEY,
    check_create_partitions,
    check_create_topics,
    check_delete_topics,
    parse_create_partitions,
    parse_create_topics,
    parse_delete_topics,
)
from reassignd.int_limits import INT32_MAX
from reassignd.testing.fake_view import ACTIVE, SETTINGS, FakeView, call, serve
from tests.examples import examples
from tests.unit.http import (
    batch_helpers,
    election_cases,
    log_dir_move_cases,
    quota_helpers,
    reassignment_helpers,
    topic_cases,
)

DOC = openapi_document()
METHODS = ("get", "put", "post", "delete", "patch", "options", "head", "trace")

PARSERS: dict[str, Callable[[bytes], object]] = {
    "/v1/reassignments": parse_alter_body,
    "/v1/topics": lambda raw: parse_create_topics(raw, Requester()),
    "/v1/topics/delete": lambda raw: parse_delete_topics(raw, Requester()),
    "/v1/topics/partitions": lambda raw: parse_create_partitions(raw, Requester()),
    "/v1/quotas": parse_alter_quotas,
    "/v1/elections": parse_elect_body,
    "/v1/log-dirs/moves": parse_moves_body,
    "/v1/batches": lambda raw: parse_submit_body(raw, BatchDefaults.of(SETTINGS), lambda: "b-1"),
}

# the door's second tier: what words each refusal (http/door.py)
STRICT_READERS: dict[str, Callable[[bytes], object]] = {
    "/v1/reassignments": strict_alter_body,
    "/v1/topics": check_create_topics,
    "/v1/topics/delete": check_delete_topics,
    "/v1/topics/partitions": check_create_partitions,
    "/v1/quotas": check_alter_quotas,
    "/v1/elections": check_elect_body,
    "/v1/log-dirs/moves": check_moves_body,
    "/v1/batches": lambda raw: parse_submit_doc(decode_body(raw), BatchDefaults.of(SETTINGS), lambda: "b-1"),
}


def documented() -> set[tuple[str, str]]:
    return {(m.upper(), path) for path, item in DOC["paths"].items() for m in item if m in METHODS}


def operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in DOC["paths"].items():
        for method, op in item.items():
            yield method.upper(), path, op


# --- in sync with the routes -----------------------------------------------------------------------


def test_every_route_is_documented_and_every_documented_route_exists() -> None:
    app = build_app(FakeView(), SETTINGS)
    registered = {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.method not in ("HEAD", "*") and route.resource is not None
    }
    assert registered == documented()
    # the fixed paths a topic's path also matches answer every other method 405 (no operation)
    answered_405 = {r.resource.canonical for r in app.router.routes() if r.method == "*" and r.resource}
    assert answered_405 == {"/v1/topics/delete", "/v1/topics/partitions"}


def test_the_answers_schemas_are_generated_from_the_contracts() -> None:
    """Every answer component is the schema msgspec generates from the contract's struct (the one
    the server encodes and the client decodes); the request schemas keep their own names."""
    generated = answer_schemas(answer_contracts(OPERATIONS))
    assert {"Status", "Topic", "ListReassignmentsResponse", "BatchStatus", "Error"} <= set(generated)
    assert {name: DOC["components"]["schemas"][name] for name in generated} == generated
    assert set(generated).isdisjoint(SCHEMAS)
    answers = {
        r["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
        for _, _, op in operations()
        for r in op["responses"].values()
        if "application/json" in r.get("content", {}) and "$ref" in r["content"]["application/json"]["schema"]
    }
    assert answers <= set(generated), answers - set(generated)


def test_the_route_table_is_what_the_app_serves_and_the_document_says() -> None:
    """One declaration per operation: the app registers each one's handler, the document lists
    each one once, and the role a declaration names is the one the auth middleware asks for."""
    app = build_app(FakeView(), SETTINGS)
    handlers = {
        (route.method, route.resource.canonical): route.handler
        for route in app.router.routes()
        if route.method != "HEAD" and route.resource is not None
    }
    assert len({(op.method, op.path) for op in OPERATIONS}) == len(OPERATIONS)
    for op in OPERATIONS:
        served = handlers[(op.method, op.path)]
        assert inspect.unwrap(served) is op.handler, f"{op.method} {op.path}"
        assert (served is op.handler) == (op.query is None), f"{op.method} {op.path}"  # the query's door
        assert required_role(op.method, op.path) == op.role, f"{op.method} {op.path}"
        public = DOC["paths"][op.path][op.method.lower()].get("security") == []
        assert public == (op.role is None), f"{op.method} {op.path}"


def test_path_parameters_are_the_routes_placeholders() -> None:
    for method, path, op in operations():
        in_path = set(re.findall(r"{(\w+)}", path))
        params = {p["name"] for p in op.get("parameters", ()) if p["in"] == "path"}
        assert params == in_path, f"{method} {path}"


def test_the_document_is_valid_openapi_3_1() -> None:
    assert DOC["openapi"].startswith("3.1.")
    errors = list(
        jsonschema_rs.validator_for(definitions.OPENAPI_31).iter_errors(json.loads(json.dumps(DOC)))
    )
    assert errors == []
    loaded = schemathesis.openapi.from_dict(DOC)
    ops = []
    for result in loaded.get_all_operations():
        assert isinstance(result, Ok), result  # a broken operation is an Err
        ops.append(result.ok())
    assert len(ops) == len(documented())


def test_every_operation_has_an_id_an_answer_and_the_error_object() -> None:
    ids = [op["operationId"] for _, _, op in operations()]
    assert len(ids) == len(set(ids))
    for method, path, op in operations():
        assert "200" in op["responses"], f"{method} {path}"
        if path in PUBLIC_PATHS:
            continue
        assert op["responses"]["default"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"
        }
        assert {"401", "403"} <= set(op["responses"])
        if method != "GET":
            assert {"400", "503"} <= set(op["responses"]), f"{method} {path}"
            assert ("413" in op["responses"]) == ("requestBody" in op), f"{method} {path}"


async def test_a_standby_answers_503_exactly_where_the_document_says() -> None:
    """Every GET on a standby: the ones whose data only the active controller has answer 503
    NOT_CONTROLLER and declare it; the others answer 200 and do not."""
    standby = FakeView(current=replace(ACTIVE, controller_id=9001, active=False))
    async with serve(standby) as c:
        for method, path, op in operations():
            if method != "GET":
                continue
            resp = await c.get(path.replace("{topic}", "orders").replace("{batch_id}", "b-1"))
            assert resp.status in (200, 503), f"{path}: {resp.status}"
            assert (resp.status == 503) == declares_not_controller(op), path
            if resp.status == 503:
                assert (await resp.json())["active_controller"] == {
                    "id": 9000,
                    "http": "http://127.0.0.1:8080",
                }


def declares_not_controller(op: dict[str, Any]) -> bool:
    answer = op["responses"].get("503", {})
    return bool(answer) and answer["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/NotControllerError"
    }


def test_every_read_of_the_active_controllers_data_declares_503() -> None:
    reads = {path for method, path, op in operations() if method == "GET" and declares_not_controller(op)}
    assert reads == {
        "/v1/brokers",
        "/v1/topics",
        "/v1/topics/{topic}",
        "/v1/reassignments",
        "/v1/batches",
        "/v1/batches/{batch_id}",
        "/v1/batches/{batch_id}/picture.svg",
        "/v1/log-dirs",
    }


def test_bearer_auth_everywhere_but_the_public_endpoints() -> None:
    assert DOC["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": DOC["components"]["securitySchemes"]["bearerAuth"]["description"],
    }
    assert DOC["security"] == [{"bearerAuth": []}]
    public = {path for _, path, op in operations() if op.get("security") == []}
    assert public == PUBLIC_PATHS


async def test_served_as_json_to_a_viewer() -> None:
    tokens = {"v": Principal("bob", Role.VIEWER)}
    async with serve(FakeView(), tokens) as c:
        await call(c, "GET", "/v1/openapi.json", 401)
        assert await call(c, "GET", "/v1/openapi.json", 200, headers={"Authorization": "Bearer v"}) == DOC


# --- request schemas == strict parsers ------------------------------------------------------------


def body_validator(path: str) -> jsonschema_rs.Validator:
    schema = DOC["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    return jsonschema_rs.Draft202012Validator({**schema, "components": DOC["components"]})


# Refusals of the plan reader that JSON Schema cannot state (reassignd.plan_format).
PLAN_RULES_BEYOND_SCHEMA = (
    "is different from size of log dirs list",
    "duplicate topic partitions",
    "must be at least min",  # limits.adaptive: JSON Schema cannot compare two members
    "a replica is moved to one dir",  # POST /v1/log-dirs/moves: a (topic, partition) named twice
    "bytes in UTF-8",  # a batch's log dir: the schema bounds its characters, the parser its bytes
)


def parser_accepts(path: str, raw: bytes) -> bool:
    return parser_verdict(path, raw) is True


def parser_verdict(path: str, raw: bytes) -> bool | None:
    """True: accepted; False: refused; None: refused by a rule JSON Schema cannot state."""
    try:
        PARSERS[path](raw)
    except InvalidRequest as e:
        # the words are the strict reader's: msgspec refuses nothing that reader lets through
        # (http/door.py maps msgspec's own message only as a last resort)
        with pytest.raises(InvalidRequest):
            STRICT_READERS[path](raw)
        return None if any(rule in str(e) for rule in PLAN_RULES_BEYOND_SCHEMA) else False
    return True


def test_every_post_route_with_a_body_has_a_parser_here() -> None:
    assert {path for method, path, op in operations() if method == "POST" and "requestBody" in op} == set(
        PARSERS
    )


def request_objects(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            yield schema
        for value in schema.values():
            yield from request_objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from request_objects(value)


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_request_objects_are_closed(name: str) -> None:
    for obj in request_objects(SCHEMAS[name]):
        # False, the schema of a map's values, or True where unknown fields are ignored (a plan)
        assert "additionalProperties" in obj, obj
        assert obj["additionalProperties"] is not True or name in TOLERANT, name


# --- request schemas == the request structs --------------------------------------------------------

# The struct of each body (POST /v1/reassignments: either shape, told apart as its parser does).
STRUCTS: dict[str, type[msgspec.Struct]] = {
    "/v1/topics": rq.CreateTopicsRequest,
    "/v1/topics/delete": rq.DeleteTopicsRequest,
    "/v1/topics/partitions": rq.CreatePartitionsRequest,
    "/v1/quotas": rq.AlterQuotasRequest,
    "/v1/elections": rq.ElectLeadersRequest,
    "/v1/log-dirs/moves": rq.MoveLogDirsRequest,
    "/v1/batches": rq.SubmitBatchRequest,
}


def body_struct(path: str, doc: Any) -> type[msgspec.Struct]:
    if path == "/v1/reassignments":
        return rq.ReassignmentPlan if "partitions" in doc or "version" in doc else rq.KafkaAlterReassignments
    return STRUCTS[path]


def means_the_same_through_its_struct(path: str, doc: Any) -> None:
    """A body the parser accepts is a value of its struct, and the struct's encoding (what a client
    sends) means the same to the parser: the structs can say whatever the API takes."""
    value = msgspec.convert(doc, body_struct(path, doc))
    assert PARSERS[path](msgspec.json.encode(value)) == PARSERS[path](json.dumps(doc).encode())


def test_every_request_schema_but_one_oneof_is_generated_from_its_struct() -> None:
    _, generated = msgspec.json.schema_components(rq.REQUESTS, ref_template="#/components/schemas/{name}")
    assert set(HAND_WRITTEN) == {"AlterReassignmentsRequest"}
    assert set(SCHEMAS) == set(generated) | set(HAND_WRITTEN)
    assert {"ReassignmentPlan", "SubmitBatchRequest", "BatchPartitionSpec", "AdaptiveLimits"} <= set(
        generated
    )
    for name, schema in generated.items():
        # msgspec writes additionalProperties for a closed struct only; a plan's objects say True
        assert SCHEMAS[name] == ({**schema, "additionalProperties": True} if name in TOLERANT else schema)
    assert HAND_WRITTEN["AlterReassignmentsRequest"]["oneOf"] == [
        {"$ref": "#/components/schemas/KafkaAlterReassignments"},
        {"$ref": "#/components/schemas/ReassignmentPlan"},
    ]
    assert {
        DOC["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        for path in STRUCTS
    } == {f"#/components/schemas/{struct.__name__}" for struct in STRUCTS.values()}


def test_the_structs_constants_are_the_parsers() -> None:
    assert set(get_args(rq.StrategyName)) == set(STRATEGIES) == {s.value for s in Strategy}
    assert rq.PLAN_ID_MAX == PLAN_ID_MAX
    assert rq.BATCH_LOG_DIR_MAX == LOG_DIR_MAX


def test_the_structs_a_client_builds_are_what_the_parsers_read() -> None:
    plan = rq.ReassignmentPlan(
        partitions=(
            rq.PlanPartition(topic="orders", partition=0, replicas=(4, 5), log_dirs=("any", "/data")),
            rq.PlanPartition(topic="audit", partition=3, replicas=(1,)),
        )
    )
    raw = msgspec.json.encode(plan)
    assert raw.startswith(b'{"version":1,"partitions":[')
    assert body_validator("/v1/reassignments").is_valid(json.loads(raw))
    assert parse_alter_body(raw) == AlterReassignments(((("orders", 0), (4, 5)), (("audit", 3), (1,))))
    batch = rq.SubmitBatchRequest(
        partitions=(rq.BatchPartitionSpec("orders", 0, (4, 5, 6), expected_replicas=(1, 2, 3)),),
        batch_id="b-7",
        plan_id=None,
        priority=2,
        throttle_bytes_per_s=1000,
        limits=rq.BatchLimitsSpec(moves_per_broker=3, adaptive=rq.AdaptiveLimits(1, 4)),
        strategy=("small_first", "spread_brokers"),
    )
    raw = msgspec.json.encode(batch)
    assert body_validator("/v1/batches").is_valid(json.loads(raw))
    defaults = BatchDefaults.of(SETTINGS)
    assert parse_submit_body(raw, defaults, lambda: "unused") == BatchSpec(
        batch_id="b-7",
        partitions=(PartitionSpec("orders", 0, (4, 5, 6), (1, 2, 3)),),
        limits=Limits(
            3, defaults.limits.moves_in_cluster, defaults.limits.leader_moves_per_broker, Adaptive(1, 4)
        ),
        priority=2,
        throttle_bytes_per_s=1000,
        strategy=(Strategy.SMALL_FIRST, Strategy.SPREAD_BROKERS),
    )
    # what a body leaves out stays out: the controller fills it in
    assert msgspec.json.encode(rq.SubmitBatchRequest(partitions=())) == b'{"partitions":[]}'


VALID: list[tuple[str, Any]] = [
    ("/v1/topics", topic_cases.CREATE),
    (
        "/v1/topics",
        {"topics": [{"name": "t", "assignments": None, "num_partitions": -1, "configs": {"a": None}}]},
    ),
    ("/v1/topics", {"topics": [{"name": "t", "assignments": {"0": [1], "2147483647": []}}]}),
    ("/v1/topics/delete", {"topics": ["a", ""], "timeout_ms": INT32_MAX}),
    (
        "/v1/topics/partitions",
        {"topics": [{"name": "t", "count": 3, "assignments": [[1, 2]]}], "timeout_ms": 0},
    ),
    ("/v1/reassignments", reassignment_helpers.KAFKA_REQUEST),
    ("/v1/reassignments", reassignment_helpers.PLAN),
    (
        "/v1/reassignments",
        {"mode": "stop", "topics": [{"name": "t", "partitions": [{"partition": 0, "replicas": None}]}]},
    ),
    (
        "/v1/quotas",
        {"entries": [quota_helpers.entry({"user": "u", "client_id": "<default>"}, ("k", None), ("k", 1.5))]},
    ),
    ("/v1/quotas", {"entries": [quota_helpers.entry({})]}),
    ("/v1/elections", {"election_type": "preferred", "partitions": None}),
    ("/v1/elections", {"election_type": "unclean", "partitions": [{"topic": "", "partition": INT32_MAX}]}),
    ("/v1/log-dirs/moves", {"broker": 1, "moves": [{"topic": "t", "partition": 0, "dir": "/d2"}]}),
    (
        "/v1/log-dirs/moves",
        {"broker": INT32_MAX, "moves": [{"topic": "a.b", "partition": INT32_MAX, "dir": "x" * 4096}]},
    ),
    ("/v1/batches", batch_helpers.FULL),
    ("/v1/batches", {"partitions": []}),
    (
        "/v1/batches",
        {
            "partitions": [{"topic": "", "partition": 0, "replicas": [], "expected_replicas": None}],
            "plan_id": None,
            "throttle_bytes_per_s": None,
            "limits": {"moves_in_cluster": INT32_MAX},
            "strategy": ["large_first", "spread_brokers"],
            "batch_id": "a.b_c-D.rollback",
        },
    ),
]


@pytest.mark.parametrize(("path", "doc"), VALID)
def test_valid_examples_pass_both(path: str, doc: Any) -> None:
    raw = json.dumps(doc).encode()
    assert body_validator(path).is_valid(json.loads(raw))
    assert parser_accepts(path, raw)
    means_the_same_through_its_struct(path, doc)


def _beyond_json_schema(raw: bytes, message: str) -> bool:
    """What a JSON Schema cannot see: bytes that are not JSON, repeated keys, doubles past
    1.8e308. (2.0 for an integer is 2 to both.)"""
    return (
        message.startswith("request body: invalid JSON")
        or "duplicate" in message
        or "out of range for a double" in message
        or "must be at least min" in message
    )


MALFORMED = [
    *(("/v1/reassignments", raw, message) for raw, message in reassignment_helpers.MALFORMED),
    *topic_cases.CASES,
    *(("/v1/quotas", raw, message) for raw, message in quota_helpers.MALFORMED),
    *(("/v1/batches", raw, message) for raw, message in batch_helpers.MALFORMED),
    *(("/v1/elections", raw, message) for raw, message in election_cases.MALFORMED),
    *(("/v1/log-dirs/moves", raw, message) for raw, message in log_dir_move_cases.MALFORMED),
]


@pytest.mark.parametrize(
    ("path", "raw", "message"),
    [case for case in MALFORMED if not _beyond_json_schema(case[1], case[2])],
    ids=lambda v: v if isinstance(v, str) and not v.startswith("/") else None,
)
def test_every_malformed_body_the_parsers_refuse_the_schema_refuses(
    path: str, raw: bytes, message: str
) -> None:
    assert not body_validator(path).is_valid(json.loads(raw)), message


def _integral(value: Any) -> Any:
    """2.0 → 2 all the way down: what the door reads (``http/door.py``), and what a struct holds."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral(v) for v in value]
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    return value


_LOADED = schemathesis.openapi.from_dict(DOC)
_BODY_CASES = [
    (method, path, mode)
    for method, path, op in operations()
    if method == "POST" and "requestBody" in op
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
]


@pytest.mark.parametrize(
    ("method", "path", "mode"), _BODY_CASES, ids=[f"{p} {m.value}" for _, p, m in _BODY_CASES]
)
def test_generated_bodies_are_judged_alike_by_schema_and_parser(
    method: str, path: str, mode: GenerationMode
) -> None:
    operation = _LOADED[path][method]
    validator = body_validator(path)

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=examples(60), deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def judged_alike(case: schemathesis.Case[Any]) -> None:
        if isinstance(case.body, bytes | bytearray):  # not JSON at all
            assert not parser_accepts(path, bytes(case.body))
            return
        doc = case.body  # 2.0 where an integer goes too: the door reads it as 2, the schema admits it
        raw = json.dumps(doc).encode()
        verdict = parser_verdict(path, raw)
        # accepted or refused, the schema says the same; refused by a rule beyond the schema (a
        # replica named twice), the schema may say either: the body may break one of its rules
        # too, further on (the readers stop at the first problem)
        if verdict is not None:
            assert verdict == validator.is_valid(doc), raw[:500]
        if verdict is True:
            means_the_same_through_its_struct(path, _integral(doc))
            assert PARSERS[path](raw) == PARSERS[path](json.dumps(_integral(doc)).encode())

    judged_alike()


@given(st.text(alphabet="0123456789-+ x", max_size=12) | st.integers(0, 2**40).map(str))
def test_the_partition_key_pattern_is_the_parsers_rule(key: str) -> None:
    parser_takes = PARTITION_KEY.fullmatch(key) is not None and int(key) <= INT32_MAX
    assert (re.fullmatch(PARTITION_KEY_PATTERN.strip("^$"), key) is not None) == parser_takes
    for edge in ("0", "9", "10", "2147483647", "2147483648", "2147483650", "3000000000", "01", "-1"):
        assert (re.fullmatch(PARTITION_KEY_PATTERN.strip("^$"), edge) is not None) == (
            PARTITION_KEY.fullmatch(edge) is not None and int(edge) <= INT32_MAX
        ), edge
