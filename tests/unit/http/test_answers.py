"""Read answers kept encoded (``reassignd.http.answers``): a kept answer follows every new
snapshot part (never a stale answer after a change), different query parameters never share an
entry, ETag / If-None-Match, and concurrent reads sharing one round of questions to the agents.

The real aiohttp app over a real socket in front of the fake ControllerView, and tiny real
agents answering ``GET /replicas`` on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import aiohttp
import msgspec
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from reassignd.agent_reports.fetch import SharedReports, agent_url
from reassignd.control.replicas_report import ReplicaInfo
from reassignd.controller.model.snapshot import (
    ActiveControllerAddress,
    BrokerView,
    ClusterSnapshot,
    PartitionView,
    Problem,
    ReassignmentView,
    TopicView,
)
from reassignd.controller.settings import ControllerSettings
from reassignd.http.answers import AnswerCache, Parts
from reassignd.http.app import build_app
from reassignd.http.routes.reassignments import list_response_json, list_response_parts, reassignment_json
from reassignd.http.shapes import status_json
from reassignd.testing.fake_view import FakeView

Client = TestClient[web.Request, web.Application]
SETTINGS = ControllerSettings(zk_connect="127.0.0.1:2181", http_port=0)

ORDERS_0 = ReassignmentView("orders", 0, (4, 1, 2, 3), (4,), (3,), (4, 1, 2), (1, 2, 3), "api", None, 1)
AUDIT_1 = ReassignmentView("audit", 1, (5, 2, 3), (5,), (1,), (5, 2, 3), (1, 2, 3), "zk", None, 2)
BROKERS = {b: BrokerView(b, None, (f"PLAINTEXT://h:{9090 + b}",), 1000 + b) for b in range(1, 6)}


def topic_view(name: str, leader: int) -> TopicView:
    partitions = (PartitionView(0, (1, 2, 3), leader, 5, (1, 2, 3), (), ()),)
    return TopicView(name, "AAAAAAAAAAAAAAAAAAAAAA", partitions)


ACTIVE = ClusterSnapshot(
    controller_id=9000,
    active=True,
    controller_epoch=3,
    active_controller=ActiveControllerAddress(9000, "http://127.0.0.1:8080"),
    brokers=BROKERS,
    topics={"orders": topic_view("orders", 1)},
    reassignments={("orders", 0): ORDERS_0},
)


@dataclass
class LiveView(FakeView):
    """The fake with a queue whose size the test sets (a live figure of /v1/status)."""

    queued: int = 0

    def queue_size(self) -> int:
        return self.queued

    def queue_time_percentiles_ms(self) -> Mapping[str, float]:
        return {"p50": float(self.queued), "p99": float(self.queued)}


@pytest.fixture
async def served() -> AsyncIterator[tuple[LiveView, Client]]:
    view = LiveView(current=ACTIVE)
    async with TestClient(TestServer(build_app(view, SETTINGS))) as client:
        yield view, client


async def get(client: Client, path: str, headers: Mapping[str, str] | None = None) -> tuple[int, Any, str]:
    resp = await client.get(path, headers=headers)
    text = await resp.text()
    return resp.status, (msgspec.json.decode(text) if text else None), resp.headers.get("ETag", "")


def listed(reply: Any) -> list[tuple[str, int, list[int]]]:
    return [
        (t["name"], p["partition"], p["target_replicas"]) for t in reply["topics"] for p in t["partitions"]
    ]


# --- the cache itself (pure) -------------------------------------------------------------------


def test_a_kept_answer_is_served_while_its_sources_are_the_same_objects() -> None:
    cache = AnswerCache()
    source = {"a": 1}
    first = cache.get("k", (source,), lambda: {"v": 1})
    assert cache.get("k", (source,), lambda: {"v": 2}) is first  # same object: kept, not built
    assert cache.built == 1
    equal_but_new = {"a": 1}  # a new snapshot's part: built again, even if equal
    second = cache.get("k", (equal_but_new,), lambda: {"v": 2})
    assert second.body == b'{"v":2}' and second.etag != first.etag
    assert cache.built == 2


def test_an_answer_built_from_replaced_sources_does_not_evict_the_newer_one() -> None:
    cache = AnswerCache()
    old, new = object(), object()
    newer = cache.get("k", (new,), lambda: {"v": "new"})
    late = cache.get("k", (old,), lambda: {"v": "old"}, keep=False)  # a read that awaited meanwhile
    assert late.body == b'{"v":"old"}'
    assert cache.get("k", (new,), lambda: {"v": "rebuilt"}) is newer


def test_different_keys_never_share_an_entry_and_the_cache_is_bounded() -> None:
    cache = AnswerCache(max_entries=3)
    source = object()
    bodies = [cache.get(("q", i), (source,), lambda i=i: {"i": i}).body for i in range(5)]  # type: ignore[misc]
    assert bodies == [f'{{"i":{i}}}'.encode() for i in range(5)]
    assert len(cache) == 3  # the oldest went first
    assert cache.get(("q", 4), (source,), lambda: {"i": -1}).body == b'{"i":4}'
    assert cache.get(("q", 0), (source,), lambda: {"i": -1}).body == b'{"i":-1}'  # evicted: built again


def test_parts_are_encoded_again_only_for_new_objects_and_pruned_past_a_bound() -> None:
    parts = Parts()
    first = parts.part(("orders", 0), ORDERS_0, lambda: reassignment_json(ORDERS_0, None))
    assert parts.part(("orders", 0), ORDERS_0, lambda: {"stale": True}) is first
    moved = msgspec.structs.replace(ORDERS_0, target_replicas=(4, 5, 2))
    again = parts.part(("orders", 0), moved, lambda: reassignment_json(moved, None))
    assert msgspec.json.decode(bytes(again))["target_replicas"] == [4, 5, 2]
    parts.part(("audit", 1), AUDIT_1, lambda: reassignment_json(AUDIT_1, None))
    parts.prune({("audit", 1)}, at_most=2)
    assert len(parts) == 2  # within the bound: nothing forgotten
    parts.prune({("audit", 1)}, at_most=1)
    assert len(parts) == 1


def test_an_answer_assembled_from_parts_is_byte_for_byte_the_built_one() -> None:
    views = sorted(
        [ORDERS_0, AUDIT_1, msgspec.structs.replace(AUDIT_1, partition=0)],
        key=lambda r: (r.topic, r.partition),
    )
    built = msgspec.json.encode(list_response_json([(r, None) for r in views]))
    parts = Parts()
    assembled = list_response_parts(
        views, lambda r: parts.part((r.topic, r.partition), r, lambda: reassignment_json(r, None))
    )
    assert msgspec.json.encode(assembled) == built


# --- GET /v1/reassignments ---------------------------------------------------------------------


async def test_the_reassignments_answer_follows_a_new_snapshot(served: tuple[LiveView, Client]) -> None:
    view, client = served
    status, reply, etag = await get(client, "/v1/reassignments")
    assert status == 200 and listed(reply) == [("orders", 0, [4, 1, 2])]
    assert (await get(client, "/v1/reassignments"))[2] == etag  # nothing changed: the kept bytes
    assert (await get(client, "/v1/reassignments", {"If-None-Match": etag}))[:2] == (304, None)

    moved = msgspec.structs.replace(ORDERS_0, target_replicas=(4, 5, 2))
    view.current = replace(ACTIVE, reassignments={("orders", 0): moved, ("audit", 1): AUDIT_1})
    status, reply, new_etag = await get(client, "/v1/reassignments", {"If-None-Match": etag})
    assert status == 200 and new_etag != etag
    assert listed(reply) == [("audit", 1, [5, 2, 3]), ("orders", 0, [4, 5, 2])]

    view.current = replace(ACTIVE, reassignments={})  # the moves ended
    assert (await get(client, "/v1/reassignments"))[1]["topics"] == []


async def test_two_filters_never_share_an_entry(served: tuple[LiveView, Client]) -> None:
    view, client = served
    view.current = replace(ACTIVE, reassignments={("orders", 0): ORDERS_0, ("audit", 1): AUDIT_1})
    expected = {
        "?topic=orders": [("orders", 0, [4, 1, 2])],
        "?topic=audit": [("audit", 1, [5, 2, 3])],
        "?partition=1": [("audit", 1, [5, 2, 3])],
        "?topic=audit&partition=0": [],
        "": [("audit", 1, [5, 2, 3]), ("orders", 0, [4, 1, 2])],
    }
    etags: dict[str, set[str]] = {query: set() for query in expected}
    for _ in range(3):  # alternated: each filter keeps its own entry (its ETag stays the same)
        for query, shown in expected.items():
            _, reply, etag = await get(client, "/v1/reassignments" + query)
            assert listed(reply) == shown
            etags[query].add(etag)
    assert all(len(tags) == 1 for tags in etags.values())
    assert len(set.union(*etags.values())) == len(expected)


# --- progress: the agents' answers are part of what the answer was built from -------------------


@dataclass
class Agent:
    """A broker agent's ``GET /replicas``; with ``gate`` set, it answers once the gate opens."""

    broker_id: int
    log_end_offset: int = 0
    gate: asyncio.Event | None = None
    hits: int = 0
    reached: asyncio.Event = field(default_factory=asyncio.Event)

    async def replicas(self, request: web.Request) -> web.Response:
        self.hits += 1
        self.reached.set()
        if self.gate is not None:
            await self.gate.wait()
        info = ReplicaInfo("orders", 0, False, self.log_end_offset, 100, 10.0, False)
        return web.json_response({"broker_id": self.broker_id, "replicas": [info.to_json()]})


async def test_progress_follows_the_agents_answers(served: tuple[LiveView, Client], serve_agent: Any) -> None:
    view, client = served
    agent = Agent(4, log_end_offset=10)
    brokers = dict(BROKERS)
    brokers[4] = BrokerView(4, None, (await serve_agent(agent),), 1004)
    view.current = replace(ACTIVE, brokers=brokers)
    progress = (await get(client, "/v1/reassignments"))[1]["topics"][0]["partitions"][0]["progress"]
    assert progress["bytes_done"] == 10
    agent.log_end_offset = 60
    progress = (await get(client, "/v1/reassignments"))[1]["topics"][0]["partitions"][0]["progress"]
    assert progress["bytes_done"] == 60  # same snapshot, new figures from the agent
    assert agent.hits == 2


async def test_concurrent_reads_share_one_round_of_questions(serve_agent: Any) -> None:
    agent = Agent(4, log_end_offset=7, gate=asyncio.Event())
    url = agent_url([await serve_agent(agent)])
    assert url is not None
    urls = {4: url}
    shared = SharedReports()
    async with aiohttp.ClientSession() as session:
        waiters = [asyncio.create_task(shared.fetch(session, urls)) for _ in range(3)]
        await asyncio.wait_for(agent.reached.wait(), 10)  # the round reached the agent
        waiters[0].cancel()  # one reader going away does not cancel the others' round
        agent.gate.set()  # type: ignore[union-attr]
        answers = await asyncio.gather(*waiters[1:])
        assert waiters[0].cancelled()
        assert agent.hits == 1
        assert answers[0] is answers[1] and answers[0][4].replicas[0].log_end_offset == 7
        again = await shared.fetch(session, urls)  # the round is over: the next read asks again
        assert agent.hits == 2 and again is not answers[0]


# --- GET /v1/status and the topics -------------------------------------------------------------


async def test_status_follows_a_new_snapshot_and_its_live_figures_every_request(
    served: tuple[LiveView, Client],
) -> None:
    view, client = served
    reply = (await get(client, "/v1/status"))[1]
    assert reply["brokers"]["live"] == [1, 2, 3, 4, 5] and reply["event_queue"]["size"] == 0
    view.queued = 7
    reply = (await get(client, "/v1/status"))[1]
    assert reply["event_queue"] == {"size": 7, "queue_time_ms": {"p50": 7.0, "p99": 7.0}}

    problem = Problem("/brokers/topics/x", "not JSON", 1)
    view.current = replace(ACTIVE, brokers={1: BROKERS[1]}, problems=(problem,))
    reply = (await get(client, "/v1/status"))[1]
    assert reply["brokers"]["live"] == [1]
    assert reply["problems"] == [{"path": "/brokers/topics/x", "reason": "not JSON"}]
    expected = msgspec.json.decode(
        msgspec.json.encode(
            status_json(
                view.current,
                zk_connected=True,
                zk_session_id=1,
                queue_size=7,
                queue_time_ms={"p50": 7.0, "p99": 7.0},
                uptime_s=0,
            )
        )
    )
    assert list(reply) == [*expected, "events"]  # the same members in the same order
    assert {k: v for k, v in reply.items() if k != "events"} == expected


async def test_topic_answers_follow_their_topics(served: tuple[LiveView, Client]) -> None:
    view, client = served
    status, reply, etag = await get(client, "/v1/topics/orders")
    assert status == 200 and reply["partitions"][0]["leader"] == 1
    for named in (etag, f'"other", W/{etag}', "*"):
        assert (await get(client, "/v1/topics/orders", {"If-None-Match": named}))[:2] == (304, None)
    assert (await get(client, "/v1/topics/orders", {"If-None-Match": '"other"'}))[0] == 200
    assert [t["name"] for t in (await get(client, "/v1/topics"))[1]["topics"]] == ["orders"]
    view.current = replace(
        ACTIVE, topics={"orders": topic_view("orders", 2), "audit": topic_view("audit", 3)}
    )
    status, reply, new_etag = await get(client, "/v1/topics/orders", {"If-None-Match": etag})
    assert status == 200 and reply["partitions"][0]["leader"] == 2 and new_etag != etag
    assert (await get(client, "/v1/topics/audit"))[1]["partitions"][0]["leader"] == 3
    assert [t["name"] for t in (await get(client, "/v1/topics"))[1]["topics"]] == ["audit", "orders"]


async def test_concurrent_log_dirs_reads_share_one_round_of_questions(
    served: tuple[LiveView, Client], serve_agent: Any
) -> None:
    """``GET /v1/log-dirs`` asks the agents through the app's shared rounds too: readers that
    come while a round is out wait for it instead of asking again."""
    view, client = served
    agent = Agent(4, log_end_offset=7, gate=asyncio.Event())
    brokers = dict(BROKERS)
    brokers[4] = BrokerView(4, None, (await serve_agent(agent),), 1004)
    view.current = replace(ACTIVE, brokers=brokers)
    reads = [asyncio.create_task(get(client, "/v1/log-dirs?broker=4")) for _ in range(3)]
    await asyncio.wait_for(agent.reached.wait(), 10)
    await asyncio.sleep(0.2)  # the other reads arrive while the round is out
    agent.gate.set()  # type: ignore[union-attr]
    answers = await asyncio.gather(*reads)
    assert [status for status, _, _ in answers] == [200, 200, 200]
    assert agent.hits == 1
    assert answers[0][1] == answers[2][1]
    await get(client, "/v1/log-dirs?broker=4")  # the round is over: the next read asks again
    assert agent.hits == 2
