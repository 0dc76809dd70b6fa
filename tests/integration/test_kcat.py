"""kcat (Debian's package; librdkafka inside, as confluent-kafka) against the Kafka listener: the
cluster's metadata (``kcat -L``, as JSON) in clear, and over SASL PLAIN with a token when the
listener requires it; a wrong token is refused and the listener keeps serving."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reassignd.zk.client import ZkClient
from tests.faults.scenarios import make_topic, wait_brokers, wait_online
from tests.integration.harness import Kit, eventually
from tests.integration.kafka_clients import TOKENS, KafkaController, start_controller

pytestmark = pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed")


async def kcat(k: KafkaController, *extra: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        "kcat", "-L", "-J", "-b", k.address, "-m", "15", *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def sasl(user: str, password: str) -> tuple[str, ...]:
    return (
        "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN",
        "-X", f"sasl.username={user}", "-X", f"sasl.password={password}",
    )  # fmt: skip


def placement(metadata: dict[str, Any], topic: str) -> dict[int, tuple[int, list[int]]]:
    """A topic's partitions as kcat lists them: partition -> (leader, replicas)."""
    [t] = [t for t in metadata["topics"] if t["topic"] == topic]
    return {p["partition"]: (p["leader"], [r["id"] for r in p["replicas"]]) for p in t["partitions"]}


async def metadata_listing(k: KafkaController, *extra: str) -> dict[str, Any]:
    """kcat's metadata once it lists the three agents and the topic (the listener follows the
    controller's view, which follows ZooKeeper)."""

    async def listed() -> dict[str, Any] | None:
        code, out, err = await kcat(k, *extra)
        assert code == 0, err
        metadata: dict[str, Any] = json.loads(out)
        brokers = {b["id"] for b in metadata["brokers"]}
        topics = {t["topic"] for t in metadata["topics"]}
        return metadata if brokers == {1, 2, 3} and "orders" in topics else None

    result = await eventually(listed, timeout_s=60, what="kcat lists the brokers and the topic")
    assert isinstance(result, dict)
    return result


async def cluster_with_a_topic(kit: Kit, zk: ZkClient) -> None:
    """Three agents and a topic the controller brought online (its leaders elected)."""
    kit.cluster(3, 1)
    assert await wait_brokers(zk, {1, 2, 3})
    await make_topic(zk, "orders", {0: (1, 2), 1: (2, 3), 2: (3, 1)})
    assert await wait_online(zk, [("orders", p) for p in range(3)])


async def test_kcat_lists_the_cluster(kit: Kit, zk: ZkClient) -> None:
    k = start_controller(kit)
    await cluster_with_a_topic(kit, zk)
    metadata = await metadata_listing(k)
    assert {b["id"]: b["name"] for b in metadata["brokers"]} == {b: k.address for b in (1, 2, 3)}
    assert placement(metadata, "orders") == {0: (1, [1, 2]), 1: (2, [2, 3]), 2: (3, [3, 1])}


async def test_kcat_over_sasl_plain_and_a_wrong_token(kit: Kit, zk: ZkClient, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    k = start_controller(kit, tokens=tokens)
    await cluster_with_a_topic(kit, zk)
    metadata = await metadata_listing(k, *sasl("victor", "victor-secret"))  # a viewer may read
    assert placement(metadata, "orders") == {0: (1, [1, 2]), 1: (2, [2, 3]), 2: (3, [3, 1])}

    code, out, err = await kcat(k, *sasl("victor", "not-the-token"))
    assert code != 0, out
    assert "Authentication failed" in err or "SASL" in err, err
    # the listener still serves the next client
    assert placement(await metadata_listing(k, *sasl("alice", "alice-secret")), "orders")[0] == (1, [1, 2])
