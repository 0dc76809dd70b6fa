"""A created topic's config znode: always written, as Kafka's AdminZkClient writes it (empty when
no config is given), and its parents created again when someone deleted them."""

from __future__ import annotations

from reassignd.api_client.client import ApiClient
from reassignd.controller.runtime.controller import Controller
from reassignd.testing.controller import in_process_controller
from reassignd.testing.polling import eventually
from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import Procs


async def _created(zk: ZkClient, name: str) -> bool:
    return await zk.exists(paths.topic(name)) is not None


async def test_a_topic_without_configs_gets_an_empty_config_znode_and_lost_parents_come_back(
    procs: Procs, zk_connect: str, zk: ZkClient
) -> None:
    procs.cluster(1, 1)
    async with in_process_controller(zk_connect, session_timeout_s=4.0) as c:
        await c.until_active()
        assert c.url is not None
        await eventually(lambda: _live(c.controller), what="the broker registered")
        async with ApiClient.open(c.url, timeout_s=20) as api:
            answer = await api.post("/v1/topics", {"topics": [{"name": "plain", "num_partitions": 1}]})
            assert answer["topics"][0]["error_code"] == 0, answer
            config = await zk.get(paths.config_topic("plain"))
            assert admin_codec.decode_entity_config(config.data) == {}
            assert config.data == b'{"version":1,"config":{}}'

            # /config/topics and /brokers/topics deleted outside the controller (nothing under them)
            await zk.delete(paths.config_topic("plain"))
            await zk.delete(paths.CONFIG_TOPICS)
            answer = await api.post(
                "/v1/topics",
                {"topics": [{"name": "cfg", "num_partitions": 1, "configs": {"retention.ms": "600"}}]},
            )
            assert answer["topics"][0]["error_code"] == 0, answer
            assert await _created(zk, "cfg")
            config = await zk.get(paths.config_topic("cfg"))
            assert admin_codec.decode_entity_config(config.data) == {"retention.ms": "600"}
            status = await api.status()
            assert status.active


async def _live(controller: Controller) -> bool:
    return controller.ctx is not None and bool(controller.ctx.live_broker_ids)
