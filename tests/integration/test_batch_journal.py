"""What the batch executor does with inputs it cannot use, and with journals that ended: real
ZooKeeper, controller and agent processes, real HTTP.

- a journal of a batch that ended is deleted once its retention (``--batch-retention-s``) is over;
- a throttle restore never re-creates the config of a topic another tool deleted;
- configs another tool wrote undecodable are skipped and reported, by the throttle set and by the
  restore, while the batch runs on and the controller keeps its role;
- a version 1 journal (throttle records in its head, one of them unusable) is still loaded, its
  batch runs, and its next change writes it as version 2.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from reassignd.executor import journal
from reassignd.executor import paths as batch_paths
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.values import Delete
from tests.integration.batch_helpers import (
    RATE,
    SIZE,
    THROTTLE_KEYS,
    batch_body,
    config_of,
    journaled,
    put_config,
    state_is,
    submit,
)
from tests.integration.harness import (
    ControllerProc,
    Kit,
    active_one,
    eventually,
    read_journal,
    wait_brokers,
)
from tests.integration.reassignment_helpers import completed, make_topic, set_broker_rate

pytestmark = pytest.mark.timeout(180)

RETENTION_S = 1.5  # --batch-retention-s: short, so the test waits out little


async def controller(kit: Kit, zk: ZkClient, brokers: int, *flags: str) -> ControllerProc:
    c = kit.controller(9000, 2.0, *flags)
    await active_one(c)
    await set_broker_rate(zk, None, RATE)
    kit.cluster(brokers)
    await wait_brokers(c, set(range(1, brokers + 1)))
    return c


async def epoch(zk: ZkClient) -> int:
    return int((await zk.get(paths.CONTROLLER_EPOCH)).data or b"0")


async def unthrottled(zk: ZkClient, broker: int) -> bool:
    config = await config_of(zk, paths.config_broker(broker)) or {}
    return not any(k in config for k in THROTTLE_KEYS)


async def problems(c: ControllerProc) -> dict[str, str]:
    code, body = await c.get("/v1/status")
    assert code == 200
    return {p["path"]: p["reason"] for p in body["problems"]}


async def test_the_journal_of_a_batch_that_ended_is_deleted_after_its_retention(
    kit: Kit, zk: ZkClient
) -> None:
    c = await controller(kit, zk, 4, "--batch-retention-s", str(RETENTION_S))
    await make_topic(zk, "t", {p: (1, 2) for p in range(4)}, initial_bytes=SIZE // 4)
    await submit(c, batch_body("early", {("t", 0): [3, 4], ("t", 1): [3, 4]}))
    await eventually(lambda: state_is(c, "early", "completed"), what="the first batch completes")
    assert await zk.exists(batch_paths.batch("early")) is not None  # kept while its retention runs
    # the retention runs from the batch's end, its journal's last update (wall-clock ms)
    ended_ms = (await journaled(zk, "early")).updated_ms
    await asyncio.sleep(max(0.0, (ended_ms + RETENTION_S * 1000 - time.time() * 1000) / 1000) + 0.2)
    # the next event that runs the executor deletes it; a batch still running keeps its journal
    await submit(c, batch_body("late", {("t", 2): [3, 4], ("t", 3): [3, 4]}))

    async def deleted() -> bool:
        return await zk.exists(batch_paths.batch("early")) is None

    await eventually(deleted, what="the ended batch's journal deleted")
    code, _ = await c.get("/v1/batches/early")
    assert code == 404
    assert (await journaled(zk, "late")).batch_id == "late"
    await eventually(lambda: state_is(c, "late", "completed"), what="the second batch completes")
    await eventually(deleted, what="(still deleted)")


async def test_a_throttle_restore_never_recreates_the_config_of_a_deleted_topic(
    kit: Kit, zk: ZkClient
) -> None:
    c = await controller(kit, zk, 4)
    await set_broker_rate(zk, None, "2000")  # the moves stay running
    operator = {"reassignd.sim.initial.bytes": str(SIZE), "leader.replication.throttled.replicas": "0:9"}
    await put_config(zk, paths.config_topic("gone"), operator)
    await make_topic(zk, "gone", {p: (1, 2) for p in range(2)})
    before = await epoch(zk)
    await submit(c, batch_body("g", {("gone", p): [3, 4] for p in range(2)}, throttle_bytes_per_s=60000))

    async def throttling() -> bool:
        config = await config_of(zk, paths.config_topic("gone")) or {}
        return "0:3" in config.get("follower.replication.throttled.replicas", "")

    await eventually(throttling, what="the topic's config lists the batch's moving replicas")
    assert set((await journaled(zk, "g")).topic_throttles) == {"gone"}
    # another tool deletes the topic, its config first, all in one transaction
    ops = [Delete(paths.config_topic("gone"))]
    for p in range(2):
        ops += [Delete(paths.partition_state("gone", p)), Delete(paths.partition("gone", p))]
    ops += [Delete(paths.topic_partitions("gone")), Delete(paths.topic("gone"))]
    await zk.multi(ops)

    async def forgotten() -> bool:
        batch = await journaled(zk, "g")
        return not batch.state.unfinished and not batch.topic_throttles and not batch.broker_throttles

    await eventually(forgotten, what="the batch ended and forgot its records")
    await asyncio.sleep(1.5)  # events go on (a restore would have happened by now)
    leftover = await zk.get_or_none(paths.config_topic("gone"))
    assert leftover is None, (leftover, sorted(await zk.children(paths.CONFIG_CHANGES)))
    assert await epoch(zk) == before
    for b in (1, 2, 3, 4):
        assert await unthrottled(zk, b)


async def test_undecodable_configs_are_skipped_and_reported_and_the_batch_runs_on(
    kit: Kit, zk: ZkClient
) -> None:
    c = await controller(kit, zk, 4)
    await zk.create(paths.config_broker(3), b"\x00 not json", make_parents=True)
    await zk.create(paths.config_broker(4), b'{"version":2,"config":{}}', make_parents=True)
    # 600 KB from broker 1 at 60 KB/s: the batch runs about 10 s, long after the mid-batch write
    await make_topic(zk, "u", {p: (1, 2) for p in range(3)}, initial_bytes=SIZE // 2)
    before = await epoch(zk)
    await submit(c, batch_body("un", {("u", p): [3, 4] for p in range(3)}, throttle_bytes_per_s=60000))

    async def throttled_the_rest() -> bool:
        configs = [await config_of(zk, paths.config_broker(b)) or {} for b in (1, 2)]
        topic = await config_of(zk, paths.config_topic("u")) or {}
        return all(cfg.get(k) == "60000" for cfg in configs for k in THROTTLE_KEYS) and (
            "0:3" in topic.get("follower.replication.throttled.replicas", "")
        )

    await eventually(throttled_the_rest, what="brokers 1 and 2 and the topic throttled")
    # mid-batch, another tool writes the topic's config with a number where Kafka keeps strings
    znode = await zk.get(paths.config_topic("u"))
    await zk.set(paths.config_topic("u"), b'{"version":1,"config":{"x":5}}', znode.stat.version)
    await eventually(lambda: state_is(c, "un", "completed"), timeout_s=120, what="the batch completes")

    async def reported() -> dict[str, str] | None:
        found = await problems(c)
        wanted = {paths.config_broker(3), paths.config_broker(4), paths.config_topic("u")}
        return found if wanted <= set(found) else None

    found = await eventually(reported, what="the three configs reported")
    assert "the batch does not throttle it" in found[paths.config_broker(3)]
    assert "unsupported version 2" in found[paths.config_broker(4)]
    assert "must be a string, got number" in found[paths.config_topic("u")]
    # brokers 1 and 2 restored; the topic's record kept until its config can be read again
    for b in (1, 2):
        assert await unthrottled(zk, b)
    written = await journaled(zk, "un")
    assert set(written.topic_throttles) == {"u"} and not written.broker_throttles
    assert (await zk.get(paths.config_broker(3))).data == b"\x00 not json"  # left alone
    assert await epoch(zk) == before
    for p in range(3):
        assert await completed(zk, "u", p, (3, 4))
    # the config readable again: the next event restores it and forgets the record
    znode = await zk.get(paths.config_topic("u"))
    await zk.set(
        paths.config_topic("u"),
        admin_codec.encode_entity_config({"follower.replication.throttled.replicas": "0:3"}),
        znode.stat.version,
    )
    await submit(c, batch_body("next", {("u", 0): [4, 3]}))

    async def restored() -> bool:
        return not (await journaled(zk, "un")).topic_throttles

    await eventually(restored, what="the topic's record restored once readable")
    assert "follower.replication.throttled.replicas" not in (
        await config_of(zk, paths.config_topic("u")) or {}
    )


def version_1_journal() -> tuple[bytes, bytes]:
    """A journal as version 1 wrote it: throttle records in the head (one broker key that is no
    broker id, one topic value that is no string), chunks named without a generation."""
    head: dict[str, Any] = {
        "version": 1,
        "batch_id": "old",
        "plan_id": None,
        "priority": 0,
        "state": "pending",
        "created_ms": 1,
        "updated_ms": 1,
        "throttle_bytes_per_s": None,
        "limits": {"moves_per_broker": 5, "moves_in_cluster": 100, "leader_moves_per_broker": 100},
        "strategy": [],
        "rollback_of": None,
        "rollback_batch_id": None,
        "chunk_size": 100,
        "chunks": 1,
        "partitions": 2,
        "throttles": {
            "brokers": {"x": {"leader.replication.throttled.rate": None}},
            "topics": {"t": {"leader.replication.throttled.replicas": 5}},
        },
    }
    chunk = {
        "version": 1,
        "index": 0,
        "partitions": [
            {"topic": "t", "partition": p, "replicas": [3, 4], "state": "pending", "previous": [1, 2]}
            for p in range(2)
        ],
    }
    return json.dumps(head).encode(), json.dumps(chunk).encode()


async def test_a_version_1_journal_is_loaded_and_runs_and_is_written_as_version_2(
    kit: Kit, zk: ZkClient
) -> None:
    head, chunk = version_1_journal()
    await zk.create(batch_paths.batch("old"), head, make_parents=True)
    await zk.create(batch_paths.batch_chunk("old", 0), chunk)
    await put_config(zk, paths.config_topic("t"), {"reassignd.sim.initial.bytes": str(SIZE // 4)})
    topic = codec.TopicZnode({p: (1, 2) for p in range(2)})
    await zk.create(paths.topic("t"), codec.encode_topic(topic), make_parents=True)
    c = await controller(kit, zk, 4)
    await eventually(lambda: state_is(c, "old", "completed"), what="the version 1 batch completes")
    found = await problems(c)
    reason = found[batch_paths.batch("old")]
    assert (
        "throttle records left out" in reason and "not a broker id" in reason and "must be a string" in reason
    )
    written = await read_journal(zk, "old")
    assert written.problems == () and written.batch.state.value == "completed"
    assert journal.decode_head((await zk.get(batch_paths.batch("old"))).data).version == 2
    assert sorted(await zk.children(batch_paths.batch("old"))) == list(written.layout.chunk_names())
    for p in range(2):
        assert await completed(zk, "t", p, (3, 4))
