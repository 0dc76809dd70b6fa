"""A batch's picture: the figures before and after its moves (pure), and ``GET
/v1/batches/{batch_id}/picture.svg`` served by the real app in front of the fake view, with the
partitions' sizes from tiny real agents; a viewer may read it, no token may not."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from typing import Any

from reassignd.controller.model.snapshot import BrokerView
from reassignd.executor.dir_moves import Place
from reassignd.executor.model import BatchMove, BatchMoveEnd, PartitionSpec
from reassignd.http.auth import Principal, Role
from reassignd.http.batch_picture import batch_loads, batch_svg
from reassignd.plan_picture import SVG_NS, Holder, HolderLoad
from reassignd.testing.fake_view import FakeView, serve
from tests.unit.http.batch_helpers import BROKERS, CLUSTER, NOV_23_10H_MS, running_batch, topic
from tests.unit.http.reassignment_helpers import Agent, info, report

TOPICS = {**CLUSTER.topics, "logs": topic("logs", (1, 2), (2, 1))}
SIZES = {("orders", 0): 100, ("orders", 1): 200, ("orders", 2): 300, ("logs", 0): 7, ("logs", 1): 9}


def test_before_is_the_moves_previous_replicas_and_after_their_targets() -> None:
    batch = running_batch(NOV_23_10H_MS)  # orders-0..3 to (4, 5, 6): running, running, pending, completed
    loads = batch_loads(batch, TOPICS, SIZES, brokers=range(1, 8))
    # orders-3 has no size from the agents: counted at 0 bytes, and said so
    assert loads.unsized == 1
    assert loads.before == {
        Holder(1): HolderLoad(100 + 200 + 300 + 7 + 9, 6, 3),
        Holder(2): HolderLoad(100 + 200 + 300 + 7 + 9, 6, 2),
        Holder(3): HolderLoad(600, 4, 1),
        Holder(4): HolderLoad(),
        Holder(5): HolderLoad(),
        Holder(6): HolderLoad(),
        Holder(7): HolderLoad(),
    }
    assert loads.after == {
        Holder(1): HolderLoad(16, 2, 1),
        Holder(2): HolderLoad(16, 2, 1),
        Holder(3): HolderLoad(),
        Holder(4): HolderLoad(600, 4, 4),
        Holder(5): HolderLoad(600, 4, 0),
        Holder(6): HolderLoad(600, 4, 0),
        Holder(7): HolderLoad(),
    }


def test_brokers_with_several_dirs_are_drawn_per_dir() -> None:
    batch = running_batch(NOV_23_10H_MS)
    moves = dict(batch.moves)
    # logs-0 on (1, 2): broker 1's replica pinned to /b, recorded in /a when asked, not there yet
    moves[("logs", 0)] = BatchMove(
        PartitionSpec("logs", 0, (1, 2), log_dirs=("/b", "any")),
        (1, 2),
        started_at_ms=1,
        original_log_dirs=("/a", "any"),
        dirs_asked_ms=1,
    )
    places = {(1, "logs", 0): Place("/a", "/b", 3), (1, "logs", 1): Place("/b")}
    for p in range(3):
        places[(1, "orders", p)] = Place("/a")
    loads = batch_loads(
        replace(batch, moves=moves), TOPICS, SIZES, range(1, 8), {1: ["/a", "/b"], 2: ["/x"]}, places
    )
    assert Holder(1) not in loads.before and Holder(2) in loads.before  # one dir: drawn whole
    assert loads.before[Holder(1, "/a")] == HolderLoad(100 + 200 + 300 + 7, 4, 3)
    assert loads.before[Holder(1, "/b")] == HolderLoad(9, 1, 0)
    assert loads.after[Holder(1, "/a")] == HolderLoad()  # orders moved off, logs-0 to /b
    assert loads.after[Holder(1, "/b")] == HolderLoad(7 + 9, 2, 1)
    # orders-3's replica on broker 1 is not reported: its dir is not known
    assert loads.before[Holder(1, "any")] == HolderLoad(0, 1, 0)
    svg = ET.fromstring(batch_svg(batch, loads).split("\n", 1)[1])
    drawn = {
        (r.get("data-broker"), r.get("data-log-dir"), r.get("data-phase"))
        for r in svg.iter(f"{{{SVG_NS}}}rect")
        if r.get("data-metric") == "bytes"
    }
    assert ("1", "/b", "after") in drawn and ("2", None, "after") in drawn


def test_a_cancelled_move_stays_and_a_known_submission_size_counts() -> None:
    batch = running_batch(NOV_23_10H_MS)
    moves = dict(batch.moves)
    moves[("orders", 0)] = BatchMove(batch.spec.partitions[0], (1, 2, 3), BatchMoveEnd.CANCELLED)
    moves[("orders", 3)] = replace(moves[("orders", 3)], size_bytes=50)
    loads = batch_loads(replace(batch, moves=moves), TOPICS, SIZES)
    assert loads.unsized == 0
    assert loads.after[Holder(1)] == HolderLoad(100 + 16, 3, 2)  # orders-0 stayed; logs
    assert loads.after[Holder(4)] == HolderLoad(200 + 300 + 50, 3, 3)
    assert loads.before[Holder(3)] == HolderLoad(100 + 200 + 300 + 50, 4, 1)


def test_the_subtitle_names_the_plan_state_and_unsized_partitions() -> None:
    batch = running_batch(NOV_23_10H_MS)
    svg = batch_svg(batch, batch_loads(batch, TOPICS, SIZES))
    texts = [t.text for t in ET.fromstring(svg).iter(f"{{{SVG_NS}}}text")]
    assert "batch b1" in texts
    assert "plan p; running; 4 of 4 moves landing; 1 partitions of unknown size count 0 bytes" in texts


def drawn(svg: str) -> dict[tuple[str, str, str], int]:
    return {
        (r.get("data-broker", ""), r.get("data-metric", ""), r.get("data-phase", "")): int(
            r.get("data-value", "")
        )
        for r in ET.fromstring(svg).iter(f"{{{SVG_NS}}}rect")
        if "data-metric" in r.attrib
    }


async def test_served_to_a_viewer_with_sizes_from_the_leaders(serve_agent: Any) -> None:
    leader1 = Agent(report(1, info("orders", 0, 1000), info("orders", 1, 2000), leader=True))
    leader2 = Agent(report(2, info("orders", 2, 3000), leader=True))
    brokers = dict(BROKERS)
    brokers[1] = BrokerView(1, None, (await serve_agent(leader1),), 1001)
    brokers[2] = BrokerView(2, None, (await serve_agent(leader2),), 1002)
    view = FakeView(current=replace(CLUSTER, brokers=brokers))
    view.set_batch(running_batch(NOV_23_10H_MS))
    async with serve(view, tokens={"v": Principal("bob", Role.VIEWER)}) as c:
        resp = await c.get("/v1/batches/b1/picture.svg", headers={"Authorization": "Bearer v"})
        assert resp.status == 200, await resp.text()
        assert resp.content_type == "image/svg+xml"
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        svg = await resp.text()
        assert (await c.get("/v1/batches/b1/picture.svg")).status == 401
        missing = await c.get("/v1/batches/nope/picture.svg", headers={"Authorization": "Bearer v"})
        assert missing.status == 404 and (await missing.json())["error_code"] == 42
    bars = drawn(svg)
    assert {b for b, _, _ in bars} == {"1", "2", "3", "4", "5", "6"}
    assert bars[("1", "bytes", "before")] == 1000 + 2000 + 3000  # orders-3's leader 3 did not answer
    assert bars[("4", "bytes", "after")] == 6000
    assert bars[("4", "bytes", "before")] == 0
    assert bars[("3", "replicas", "before")] == 4 and bars[("3", "replicas", "after")] == 0
    assert bars[("4", "leaders", "after")] == 4
