"""Client quotas for ``controller_mutation_rate`` (KIP-599).

- ``GET /v1/quotas?user=U&client_id=C``: DescribeClientQuotas (no parameters: every entity).
- ``POST /v1/quotas``: AlterClientQuotas; entries decided here (invalid entity, unsupported or
  repeated key, no ops) are answered without the controller, the rest by it.
"""

from __future__ import annotations

from aiohttp import web

from reassignd.controller.requests import AlterQuotas, QuotaAlteration
from reassignd.http.json_input import query_params
from reassignd.http.keys import VIEW
from reassignd.http.quota_requests import (
    alter_quotas_json,
    describe_quotas_json,
    merge_results,
    parse_alter_quotas,
    parse_describe_query,
    plan_entry,
)
from reassignd.http.responses import json_response

routes = web.RouteTableDef()


@routes.get("/v1/quotas")
async def describe_quotas(request: web.Request) -> web.Response:
    user, client_id = parse_describe_query(request.query.items())
    descriptions = await request.app[VIEW].describe_quotas(user, client_id)
    return json_response(describe_quotas_json(descriptions))


@routes.post("/v1/quotas")
async def alter_quotas(request: web.Request) -> web.Response:
    query_params(request.query.items(), ())
    plans = [plan_entry(entry) for entry in parse_alter_quotas(await request.read())]
    # Always through the controller, even with nothing to send: a standby answers NOT_CONTROLLER.
    sent = tuple(p for p in plans if isinstance(p, QuotaAlteration))
    results = await request.app[VIEW].alter_quotas(AlterQuotas(sent))
    return json_response(alter_quotas_json(merge_results(plans, results)))
