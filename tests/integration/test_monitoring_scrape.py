"""The dashboard against real data: a Prometheus server from Debian's ``prometheus`` package scrapes
a running controller (the in-process kit, its HTTP on a free loopback port) every second while a
batch runs, and every query of every panel of deploy/monitoring/reassignd-dashboard.json, asked
through Prometheus's HTTP API, returns data; the alert rules load and evaluate without an error,
and the refused input the test makes fires its alert.
Skipped without the package (the unit loop); scripts/bootstrap.sh installs it for the full run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reassignd.zk import admin_codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.server import free_port
from tests.integration.batch_helpers import RATE, batch_body, state_is, submit
from tests.integration.harness import Kit, active_one, eventually, wait_brokers
from tests.integration.reassignment_helpers import make_topic, set_broker_rate
from tests.monitoring import PrometheusServer, panel_expressions, prometheus, rule_expressions

pytestmark = pytest.mark.timeout(300)

PARTITIONS = 12
SIZE = 300_000  # 12 moves of 300 kB into two brokers copying 100 kB/s each: the batch runs ~36 s
MAX_PARTITIONS = 16  # --max-partitions-per-request: the batch fits, the sequenced request below not
RATE_INTERVAL = "15s"  # what Grafana's $__rate_interval gives a 1 s scrape at least (4 scrapes)

# Queries whose metric has no series in this run, each with why (every other query must return data)
NO_SERIES_HERE = {
    "sum by (reason) (increase(reassignd_controller_resignations_total[$__rate_interval]))": (
        "a resignation is counted by an instance that stays up as a standby: a fenced or expired "
        "ZooKeeper session, which the fault suite causes (tests/faults), not this test"
    ),
    "max by (user, client_id) (reassignd_quota_throttle_time_ms)": (
        "per quota entity: a series appears once a user or client id has a controller_mutation_rate "
        "quota and creates topics (tests/integration/test_topics_and_quotas.py); the unlabelled "
        "sums of the same row are checked here"
    ),
}


async def test_every_dashboard_query_returns_data_while_a_batch_runs(
    kit: Kit, zk: ZkClient, tmp_path: Path
) -> None:
    binary = prometheus()
    if binary is None:
        pytest.skip("the prometheus server is not installed (Debian's prometheus package)")
    c = kit.controller(
        9000,
        2.0,
        "--events-progress-interval-s",
        "1",  # the batch figures /metrics shows are refreshed every second
        "--agent-sample-interval-s",
        "0.3",  # adaptive concurrency samples the agents: its caps move
        "--max-partitions-per-request",
        str(MAX_PARTITIONS),
        # an event stream to a Kafka that is not there: its records wait, then are dropped
        "--events-bootstrap-servers",
        f"127.0.0.1:{free_port()}",
        "--events-buffer-records",
        "5",
    )
    await active_one(c)
    await set_broker_rate(zk, None, RATE)
    kit.cluster(4)
    await wait_brokers(c, {1, 2, 3, 4})
    await make_topic(zk, "t", {p: (1, 2) for p in range(PARTITIONS)}, initial_bytes=SIZE)

    # a refused input and a znode that cannot be decoded, so those panels have series
    too_many = admin_codec.ReassignmentRequest({("t", p): (3,) for p in range(MAX_PARTITIONS + 1)})
    await zk.create(
        paths.reassignment_request("request_0000000000"),
        admin_codec.encode_reassignment_request(too_many),
        make_parents=True,
    )
    await zk.create(paths.reassignment_request("request_0000000001"), b"{not json")

    with PrometheusServer(binary, tmp_path, [c.url.removeprefix("http://")]) as server:
        await eventually(server.ready, timeout_s=60, what="prometheus ready")
        await eventually(
            lambda: _up(server), timeout_s=60, what=f"prometheus scrapes the controller\n{server.log()}"
        )
        limits = {"moves_per_broker": 1, "moves_in_cluster": 10, "adaptive": {"min": 1, "max": 4}}
        await submit(c, batch_body("watched", {("t", p): [3, 4] for p in range(PARTITIONS)}, limits=limits))

        expressions = {
            e.expr.replace("$__rate_interval", RATE_INTERVAL): e.where for e in panel_expressions()
        }
        excluded = {k.replace("$__rate_interval", RATE_INTERVAL) for k in NO_SERIES_HERE}
        assert excluded <= expressions.keys(), "an exclusion names no panel's query"
        answered: set[str] = set()
        running_throughout = True

        async def all_answered() -> bool:
            nonlocal running_throughout
            for expr in expressions.keys() - answered - excluded:
                if await server.query(expr):
                    answered.add(expr)
            running_throughout = running_throughout and await state_is(c, "watched", "running") is not None
            return answered == expressions.keys() - excluded

        try:
            await eventually(all_answered, timeout_s=90, interval_s=1.0, what="every panel's query answered")
        except AssertionError:
            missing = sorted(f"{expressions[e]}: {e}" for e in expressions.keys() - answered - excluded)
            raise AssertionError("no data for:\n" + "\n".join(missing)) from None
        # the per-batch panels had their data from the batch while it ran
        assert running_throughout, "the batch ended before every query was answered"
        for expr in excluded:  # still without series: an exclusion that is no longer needed fails
            assert await server.query(expr) == [], f"{expressions[expr]} has data now: drop its exclusion"

        # the rules loaded in the server and evaluate against the controller's series without error
        groups = (await server.get("/api/v1/rules"))["groups"]
        rules = [r for g in groups for r in g["rules"]]
        assert {r["name"] for r in rules} == {e.where.removeprefix("rule ") for e in rule_expressions()}
        await asyncio.sleep(1.5)  # one evaluation after the last query
        evaluated = [r for g in (await server.get("/api/v1/rules"))["groups"] for r in g["rules"]]
        assert all(r["health"] == "ok" for r in evaluated), [r for r in evaluated if r["health"] != "ok"]
        # the refused request fired its alert; what a healthy cluster must not fire did not
        firing = {
            (s["metric"]["alertname"], s["metric"].get("kind", ""))
            for s in await server.query('ALERTS{alertstate="firing"}')
        }
        assert ("ReassigndRefusedInputs", "reassignment_request") in firing, firing
        quiet = {"ReassigndOfflinePartitions", "ReassigndNoActiveController", "ReassigndMovesStuck"}
        assert not {name for name, _ in firing} & quiet, firing
    assert server.popen.poll() is not None  # stopped


async def _up(server: PrometheusServer) -> bool:
    return [s["value"][1] for s in await server.query('up{job="reassignd"}')] == ["1"]
