"""A quota entity literally named ``<default>`` is not the default, as in Kafka: on the Kafka wire a
null name is the default and any string a literal name, sanitized into its znode (``<default>``
is ``%3Cdefault%3E``); the HTTP API spells the default ``<default>`` and the literal name
``<<default>``. Against a real in-process controller, its Kafka listener and ZooKeeper."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from kafka.protocol.admin import AlterClientQuotasRequest, DescribeClientQuotasRequest

from reassignd.quotas.config_store import QUOTA_KEY
from reassignd.testing.controller import InProcessController, in_process_controller
from reassignd.zk.client import ZkClient
from tests.integration.kafka_door import Client, listening

pytestmark = pytest.mark.timeout(120)

CLIENTS = "/config/clients"
MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2


@pytest.fixture
async def controller(zk_connect: str) -> AsyncIterator[InProcessController]:
    async with in_process_controller(zk_connect, session_timeout_s=4.0) as c:
        await c.until_active()
        yield c


def _alter(*entries: tuple[str | None, float]) -> AlterClientQuotasRequest:
    """One entry per (client-id name, rate): None is the default entity."""
    Entry = AlterClientQuotasRequest.EntryData
    return AlterClientQuotasRequest(
        entries=[
            Entry(
                entity=[Entry.EntityData(entity_type="client-id", entity_name=name)],
                ops=[Entry.OpData(key=QUOTA_KEY, value=rate, remove=False)],
            )
            for name, rate in entries
        ],
        validate_only=False,
    )


def _describe(match_type: int, match: str | None) -> DescribeClientQuotasRequest:
    Component = DescribeClientQuotasRequest.ComponentData
    return DescribeClientQuotasRequest(
        components=[Component(entity_type="client-id", match_type=match_type, match=match)], strict=True
    )


def _entries(response: Any) -> dict[str | None, float]:
    assert response.error_code == 0, response
    found: dict[str | None, float] = {}
    for entry in response.entries:
        [entity] = entry.entity
        assert entity.entity_type == "client-id"
        found[entity.entity_name] = {v.key: v.value for v in entry.values}[QUOTA_KEY]
    return found


async def test_a_literal_default_name_on_the_kafka_wire_is_a_name_of_its_own(
    controller: InProcessController, zk: ZkClient
) -> None:
    async with listening(controller.controller.api, controller.controller.settings) as listener:
        client = await Client.open(listener)
        try:
            answer = await client.call(_alter((None, 1.0), ("<default>", 2.0)), 1)
            assert [e.error_code for e in answer.entries] == [0, 0]
            assert [e.entity[0].entity_name for e in answer.entries] == [None, "<default>"]

            # stored as Kafka stores them: the default as <default>, the name sanitized
            assert sorted(await zk.children(CLIENTS)) == ["%3Cdefault%3E", "<default>"]
            default_znode = await zk.get(f"{CLIENTS}/<default>")
            literal_znode = await zk.get(f"{CLIENTS}/%3Cdefault%3E")
            assert b'"1.0"' in (default_znode.data or b"") and b'"2.0"' in (literal_znode.data or b"")

            # DescribeClientQuotas: null for the default, the literal name for %3Cdefault%3E
            assert _entries(await client.call(_describe(MATCH_ANY, None), 1)) == {None: 1.0, "<default>": 2.0}
            assert _entries(await client.call(_describe(MATCH_DEFAULT, None), 1)) == {None: 1.0}
            assert _entries(await client.call(_describe(MATCH_EXACT, "<default>"), 1)) == {"<default>": 2.0}
        finally:
            await client.close()


async def test_the_http_api_spells_the_literal_name_with_one_more_angle_bracket(
    controller: InProcessController, zk: ZkClient
) -> None:
    assert controller.url is not None
    url = controller.url + "/v1/quotas"
    body = {
        "entries": [
            {"entity": {"client_id": "<default>"}, "ops": [{"key": QUOTA_KEY, "value": 3.0}]},
            {"entity": {"client_id": "<<default>"}, "ops": [{"key": QUOTA_KEY, "value": 4.0}]},
        ]
    }
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json=body) as response:
            assert response.status == 200, await response.text()
            results = (await response.json())["entries"]
        assert [(r["entity"], r["error_code"]) for r in results] == [
            ({"client_id": "<default>"}, 0),
            ({"client_id": "<<default>"}, 0),
        ]
        assert sorted(await zk.children(CLIENTS)) == ["%3Cdefault%3E", "<default>"]
        assert b'"4.0"' in ((await zk.get(f"{CLIENTS}/%3Cdefault%3E")).data or b"")

        async with http.get(url) as response:
            described = {
                e["entity"]["client_id"]: e["values"][QUOTA_KEY] for e in (await response.json())["entries"]
            }
        assert described == {"<default>": 3.0, "<<default>": 4.0}
        for spelled, rate in (("<default>", 3.0), ("<<default>", 4.0)):
            async with http.get(url, params={"client_id": spelled}) as response:
                [entry] = (await response.json())["entries"]
            assert entry == {"entity": {"client_id": spelled}, "values": {QUOTA_KEY: rate}}

    # and the Kafka wire reads the same entities: null and the literal name
    async with listening(controller.controller.api, controller.controller.settings) as listener:
        client = await Client.open(listener)
        try:
            assert _entries(await client.call(_describe(MATCH_ANY, None), 1)) == {None: 3.0, "<default>": 4.0}
        finally:
            await client.close()
