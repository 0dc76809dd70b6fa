"""Leader elections on demand: ``POST /v1/elections``, Kafka's ElectLeaders over HTTP.

``{"election_type": "preferred" | "unclean", "partitions": [{"topic", "partition"}] | null}``
(null: every partition). The controller handles it as it handles ElectLeaders from the Kafka
listener — one request event, the same per-partition answers: 0 elected, 84 ELECTION_NOT_NEEDED,
80 PREFERRED_LEADER_NOT_AVAILABLE, 83 ELIGIBLE_LEADERS_NOT_AVAILABLE, 3 UNKNOWN_TOPIC_OR_PARTITION.
With ``partitions`` null, the partitions that needed no election are left out of the answer, as
Kafka does. A preferred election moves leadership to each partition's first replica when it is
live and in the ISR; an unclean one gives a partition without a live leader the first live
replica, in the ISR or not (data not copied to it is lost).

The route, its strict input parsing and its JSON shapes live here together (one module per
resource).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from aiohttp import web

from reassignd.contracts.reassignments import ElectionTopicResults, ElectLeadersResponse
from reassignd.contracts.reassignments import PartitionResult as PartitionResultJson
from reassignd.contracts.requests import ElectLeadersRequest
from reassignd.controller.model.admin_requests import ElectionResult, ElectLeaders
from reassignd.controller.model.from_contracts import ELECTION_TYPES, elect_of
from reassignd.errors import error_name
from reassignd.http.door import decode_request
from reassignd.http.json_input import (
    decode_object,
    expect_int,
    expect_list,
    expect_object,
    expect_string,
    fail,
)
from reassignd.http.keys import VIEW
from reassignd.http.responses import item_message, json_response
from reassignd.int_limits import INT32_MAX
from reassignd.strict_json import json_type

# --- input parsing (pure: bytes in, the request out) -------------------------------------------


def parse_elect_body(body: bytes) -> ElectLeaders:
    """Decoded once, into its contract struct (:mod:`reassignd.http.door`);
    :func:`check_elect_body` words what msgspec refuses."""
    return decode_request(body, ElectLeadersRequest, elect_of, check_elect_body)


def check_elect_body(body: bytes) -> None:
    """The strict reader of ElectLeaders (the door's second tier): our refusal's words."""
    doc = decode_object(body, ("election_type", "partitions"))
    raw_type = doc["election_type"]
    if not isinstance(raw_type, str) or raw_type not in ELECTION_TYPES:
        shown = json.dumps(raw_type) if isinstance(raw_type, str) else json_type(raw_type)
        fail("election_type", f'expected "preferred" or "unclean", got {shown}')
    if doc["partitions"] is not None:
        for i, raw in enumerate(expect_list(doc["partitions"], "partitions")):
            path = f"partitions[{i}]"
            item = expect_object(raw, path, ("topic", "partition"))
            expect_string(item["topic"], f"{path}.topic")
            expect_int(item["partition"], f"{path}.partition", 0, INT32_MAX)


# --- shapes ----------------------------------------------------------------------------------------


def elect_response_json(results: Iterable[ElectionResult]) -> ElectLeadersResponse:
    """Results grouped by topic, topics in order of first appearance, partitions in the
    controller's order (Kafka's ElectLeadersResponse in snake_case)."""
    by_topic: dict[str, list[PartitionResultJson]] = {}
    for r in results:
        message = item_message(r.error_code, r.error_message)
        by_topic.setdefault(r.topic, []).append(
            PartitionResultJson(r.partition, r.error_code, error_name(r.error_code), message)
        )
    return ElectLeadersResponse(
        0, 0, error_name(0), None, tuple(ElectionTopicResults(t, tuple(ps)) for t, ps in by_topic.items())
    )


# --- routes ----------------------------------------------------------------------------------------


async def elect_leaders(request: web.Request) -> web.Response:
    elect = parse_elect_body(await request.read())  # over the body limit: 413
    results = await request.app[VIEW].elect_leaders(elect)
    return json_response(elect_response_json(results))
