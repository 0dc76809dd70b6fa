"""``GET /metrics`` with tokens: the families that name quota users, client ids and batches only for
a caller with a token, their unlabelled sums for everyone; batch figures from the statuses last
computed with the agents' reports, never a request to an agent per scrape. The real app on a real
socket in front of the fake view, with tiny real agents counting their requests."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import replace

from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from reassignd.agent_reports.status_cache import BatchStatusCache
from reassignd.controller.model.snapshot import BrokerView
from reassignd.executor.progress import StuckRule, batch_status
from reassignd.http.auth import Principal, Role
from reassignd.http.metrics_view import NAMED_FAMILIES
from reassignd.quotas.entities import DEFAULT
from reassignd.quotas.metrics import QuotaMetrics
from reassignd.testing.fake_view import Client, FakeView, serve
from tests.unit.http.batch_helpers import BROKERS, CLUSTER, MiB, moving, running_batch
from tests.unit.http.reassignment_helpers import Agent, info, report
from tests.unit.quotas.manager_helpers import manager

TOKENS = {"viewer-token": Principal("grafana", Role.VIEWER), "admin-token": Principal("alice", Role.ADMIN)}


async def scrape(client: Client, token: str | None = None, status: int = 200) -> dict[str, Sample]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    resp = await client.get("/metrics", headers=headers)
    text = await resp.text()
    assert resp.status == status, text
    if status != 200:
        return {}
    return {
        f"{s.name}{sorted(s.labels.items()) if s.labels else ''}": s
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def named(samples: dict[str, Sample]) -> set[str]:
    return {s.name for s in samples.values() if s.name in NAMED_FAMILIES}


async def test_batch_figures_come_from_the_cache_and_names_need_a_token(
    serve_agent: Callable[[Agent], Awaitable[str]],
) -> None:
    now_ms = int(time.time() * 1000)
    leader = Agent(report(1, info("orders", 0, 1000 * MiB), info("orders", 1, 1000 * MiB), leader=True))
    adding = Agent(
        report(
            4, info("orders", 0, 990 * MiB, 10 * MiB, 2.0 * MiB), info("orders", 1, MiB, 999 * MiB, 1000.0)
        )
    )
    brokers = dict(BROKERS)
    brokers[1] = BrokerView(1, None, (await serve_agent(leader),), 1001)
    brokers[4] = BrokerView(4, None, (await serve_agent(adding),), 1004)
    view = FakeView(
        current=replace(
            CLUSTER,
            brokers=brokers,
            reassignments={tp: moving(tp, (1, 2, 3), (4, 5, 6), 1) for tp in (("orders", 0), ("orders", 1))},
        )
    )
    view.set_batch(running_batch(now_ms - 700_000))
    async with serve(view, TOKENS) as c:
        # scrapes, with or without a token, ask no agent; nobody computed the batch yet: no figures
        for token in (None, "viewer-token", None):
            samples = await scrape(c, token)
            assert samples["reassignd_batches_bytes_remaining"].value == 0
        assert (leader.hits, adding.hits) == (0, 0)

        # a GET /v1/batches asks the agents, and what it computed is what /metrics shows
        resp = await c.get("/v1/batches/b1", headers={"Authorization": "Bearer viewer-token"})
        assert resp.status == 200
        hits = (leader.hits, adding.hits)
        assert hits == (1, 1)
        full = await scrape(c, "viewer-token")
        batch = [("batch", "b1")]
        assert full[f"reassignd_batch_bytes_remaining{batch}"].value == 2000 * MiB - 991 * MiB
        assert full[f"reassignd_batch_bytes_per_second{batch}"].value == 2 * MiB + 1000
        assert full[f"reassignd_batch_stuck_moves{batch}"].value == 1
        assert full[f"reassignd_batch_eta_seconds{batch}"].value == 505

        public = await scrape(c)
        assert named(public) == set()
        assert not any(s.labels.get("batch") for s in public.values())
        assert public["reassignd_batches_bytes_remaining"].value == 2000 * MiB - 991 * MiB
        assert public["reassignd_batches_bytes_done"].value == 991 * MiB
        assert public["reassignd_batches_stuck_moves"].value == 1
        assert public["reassignd_batches_eta_seconds"].value == 505
        assert (leader.hits, adding.hits) == hits  # still no scrape asked an agent

        # an unknown token is refused, as on every route; any known role sees the names
        await scrape(c, "not-a-token", status=401)
        assert named(await scrape(c, "admin-token")) == named(full)


async def test_without_tokens_every_caller_sees_everything() -> None:
    view = FakeView(current=CLUSTER)
    registry = view.metrics_registry
    metrics = QuotaMetrics(registry)
    m = manager({("alice", None): 10.0, (None, DEFAULT): 1.0})
    m.charge_in_order("alice", "app", [90, 90, 90], now_s=0.0)
    metrics.update(m.snapshot(5.0))
    async with serve(view) as c:
        samples = await scrape(c)
    assert "reassignd_quota_tokens" in named(samples)
    assert samples["reassignd_quota_entities"].value == 1


def test_quota_counts_without_names() -> None:
    registry = CollectorRegistry()
    metrics = QuotaMetrics(registry)
    m = manager({("alice", None): 10.0, (None, DEFAULT): 1.0})
    m.charge_in_order("alice", "app", [90, 90, 90], now_s=0.0)
    m.admit("bob", "web", 2, 0.0)
    metrics.update(m.snapshot(5.0))
    assert registry.get_sample_value("reassignd_quota_entities") == 2
    assert registry.get_sample_value("reassignd_quota_throttled_entities") == 1  # alice, below 0
    assert registry.get_sample_value("reassignd_quota_rejected_topics_overall") == 1
    m.set_quotas({(None, DEFAULT): 1.0})
    metrics.update(m.snapshot(5.0))
    assert registry.get_sample_value("reassignd_quota_entities") == 1
    assert registry.get_sample_value("reassignd_quota_throttled_entities") == 0


def test_the_cache_keeps_one_epochs_unfinished_batches() -> None:
    batch = running_batch(1000)
    rule = StuckRule(600_000, 1.0)
    status = batch_status(batch, {}, {}, 2000, rule)
    other = replace(status, batch_id="b2")
    cache = BatchStatusCache()
    assert cache.unfinished(3, ["b1"]) == []
    cache.store(3, [status, other])
    assert cache.unfinished(3, ["b1", "b2", "b9"]) == [status, other]
    assert cache.unfinished(3, ["b2"]) == [other]  # b1 ended: forgotten
    assert cache.unfinished(3, ["b1", "b2"]) == [other]
    assert cache.unfinished(4, ["b2"]) == []  # another term's figures belong to no one
    cache.store(4, [status])
    cache.store(5, [other])
    assert dict(cache.statuses) == {"b2": other}
