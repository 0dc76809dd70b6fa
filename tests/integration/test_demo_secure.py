"""The demo's ``--secure`` cluster (``scripts/demo.sh --secure``): its ZooKeeper knows one SASL
user, the controller and the agents authenticate as it with ``--zk-set-acl``, and the demo's own
session creates the topic the same way; every znode then carries Kafka's ACLs and an anonymous
session writes nowhere. The cluster start only (the story's steps are the open demo's)."""

from __future__ import annotations

import asyncio

import pytest

from reassignd.demo.options import DemoOptions
from reassignd.demo.story import Demo
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import NoAuthError
from reassignd.zk.values import ZkSettings
from tests.integration.secured_helpers import kafka_acls, tree


@pytest.mark.timeout(180)
async def test_the_secure_demo_authenticates_every_process_and_sets_kafkas_acls() -> None:
    options = DemoOptions(
        brokers=3, racks=3, partitions=3, replication_factor=2, partition_mib=1, secure=True
    )
    demo = Demo(options, asyncio.Event())
    try:
        live = await demo.start_cluster()
        assert sorted(live) == [1, 2, 3]
        cluster = demo.cluster
        assert cluster.sasl is not None and cluster.sasl.password not in " ".join(cluster.zk_args)
        assert cluster.password_file.stat().st_mode & 0o077 == 0  # the password: its owner's only
        status = await cluster.call("GET", "/v1/status")
        assert status["zookeeper"]["principal"] == "sasl:kafka" and status["zookeeper"]["acls"] == "kafka"
        await demo.steps.create_topic(live)

        async with cluster.zk() as zk:
            # no chroot: the root and /zookeeper are the server's own, as in a Kafka cluster without one
            paths = [p for p in await tree(zk) if p != "/" and not p.startswith("/zookeeper")]
            assert {
                "/brokers/ids/1",
                "/brokers/topics/demo",
                "/controller",
                "/config/brokers/<default>",
            } <= set(paths)
            wrong = {p: acls for p in paths if (acls := (await zk.get_acl(p))[0]) != kafka_acls(p)}
            assert not wrong, wrong
        anonymous = ZkClient(ZkSettings(cluster.zookeeper.connect))
        await anonymous.start()
        try:
            await anonymous.get("/brokers/topics/demo")  # the world reads, as in Kafka
            with pytest.raises(NoAuthError):
                await anonymous.set("/brokers/topics/demo", b"{}", -1)
            with pytest.raises(NoAuthError):
                await anonymous.create("/brokers/topics/intruder", b"{}")
        finally:
            await anonymous.close()
    finally:
        assert await demo.cluster.close()  # every process stopped cleanly
