"""Client quotas for ``controller_mutation_rate`` (KIP-599).

- ``GET /v1/quotas?user=U&client_id=C``: DescribeClientQuotas (no parameters: every entity).
- ``POST /v1/quotas``: AlterClientQuotas; entries decided here (invalid entity, unsupported or
  repeated key, no ops) are answered without the controller, the rest by it.

The route, its strict input parsing and its JSON shapes live here together (one module per
resource).
"""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web

from reassignd.contracts.admin import (
    AlterQuotasResponse,
    DescribedQuota,
    DescribeQuotasResponse,
    QuotaEntityName,
    QuotaResult,
)
from reassignd.contracts.queries import DescribeQuotasQuery
from reassignd.contracts.requests import AlterQuotasRequest, QuotaAlteration
from reassignd.controller.model.from_contracts import merge_quota_results, quota_entry_of
from reassignd.controller.model.requests import (
    AlterQuotas,
    QuotaAlterationResult,
    QuotaChange,
    QuotaDescription,
)
from reassignd.errors import error_name
from reassignd.http.audit import note
from reassignd.http.door import decode_request
from reassignd.http.json_input import (
    decode_object,
    expect_list,
    expect_number,
    expect_object,
    expect_string,
)
from reassignd.http.keys import VIEW
from reassignd.http.query_door import query_of
from reassignd.http.responses import json_response

# --- parsing ---------------------------------------------------------------------------------------


def parse_alter_quotas(body: bytes) -> tuple[QuotaAlteration, ...]:
    """Decoded once, into its contract struct (:mod:`reassignd.http.door`);
    :func:`check_alter_quotas` words what msgspec refuses. Each entry is planned by
    :func:`~reassignd.controller.model.from_contracts.quota_entry_of`, the Kafka listener's
    planner too."""
    return decode_request(body, AlterQuotasRequest, lambda request: request.entries, check_alter_quotas)


def check_alter_quotas(body: bytes) -> None:
    """The strict reader of AlterClientQuotas (the door's second tier): our refusal's words."""
    doc = decode_object(body, ("entries",))
    for i, raw in enumerate(expect_list(doc["entries"], "entries")):
        path = f"entries[{i}]"
        entry = expect_object(raw, path, ("entity", "ops"))
        entity = expect_object(entry["entity"], f"{path}.entity", (), ("user", "client_id"))
        for name in ("user", "client_id"):
            if name in entity:
                expect_string(entity[name], f"{path}.entity.{name}")
        for j, raw_op in enumerate(expect_list(entry["ops"], f"{path}.ops")):
            opath = f"{path}.ops[{j}]"
            op = expect_object(raw_op, opath, ("key", "value"))
            expect_string(op["key"], f"{opath}.key")
            if op["value"] is not None:
                expect_number(op["value"], f"{opath}.value")


# --- answers -------------------------------------------------------------------------------------


def describe_quotas_json(descriptions: Iterable[QuotaDescription]) -> DescribeQuotasResponse:
    return DescribeQuotasResponse(
        tuple(DescribedQuota(QuotaEntityName(d.user, d.client_id), dict(d.values)) for d in descriptions)
    )


def alter_quotas_json(results: Iterable[QuotaAlterationResult]) -> AlterQuotasResponse:
    return AlterQuotasResponse(
        tuple(
            QuotaResult(
                QuotaEntityName(r.user, r.client_id), r.error_code, error_name(r.error_code), r.error_message
            )
            for r in results
        )
    )


# --- routes ----------------------------------------------------------------------------------------


async def describe_quotas(request: web.Request) -> web.Response:
    query = query_of(request, DescribeQuotasQuery)  # ?user=U&client_id=C, decoded at the door
    user, client_id = query.user, query.client_id
    descriptions = await request.app[VIEW].describe_quotas(user, client_id)
    return json_response(describe_quotas_json(descriptions))


async def alter_quotas(request: web.Request) -> web.Response:
    plans = [quota_entry_of(entry) for entry in parse_alter_quotas(await request.read())]
    # Always through the controller, even with nothing to send: a standby answers NOT_CONTROLLER.
    sent = tuple(p for p in plans if isinstance(p, QuotaChange))
    note(request, AlterQuotas(sent))
    results = await request.app[VIEW].alter_quotas(AlterQuotas(sent))
    return json_response(alter_quotas_json(merge_quota_results(plans, results)))
