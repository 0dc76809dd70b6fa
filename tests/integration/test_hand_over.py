"""Planned hand-over: SIGTERM on the active controller (or ``POST /v1/controller/resign``) gives the
role to a standby at once. A rolling restart of every controller while a batch runs, with clients
that retry on 41 NOT_CONTROLLER, fails no client operation."""

from __future__ import annotations

import asyncio
import functools
import time
from typing import Any

import aiohttp

from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from tests.integration.harness import ControllerProc, Procs, active_one, eventually, http_request
from tests.integration.reassignment_helpers import FAST, make_topic, set_broker_rate

RETRY_FOR_S = 20.0  # how long a client keeps retrying one operation (connection errors and 41)


class RetryingClient:
    """What a client of several controller instances does: send to the instance it believes
    active; follow the ``active_controller`` of a 41 answer; on a refused connection try the next
    instance; give an operation up after RETRY_FOR_S."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.current = urls[0]
        self.retries = 0

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        deadline = time.monotonic() + RETRY_FOR_S
        while True:
            try:
                code, doc = await http_request(method, self.current + path, body, timeout_s=10.0)
            except (aiohttp.ClientError, OSError, TimeoutError):
                code, doc = -1, None
            if code != -1 and not (code == 503 and isinstance(doc, dict) and doc.get("error_code") == 41):
                return code, doc
            if time.monotonic() > deadline:
                return code, doc
            self.retries += 1
            active = doc.get("active_controller") if isinstance(doc, dict) else None
            url = active.get("http") if isinstance(active, dict) else None
            if isinstance(url, str) and url and url.rstrip("/") != self.current:
                self.current = url.rstrip("/")
            else:
                self.current = (
                    self.urls[(self.urls.index(self.current) + 1) % len(self.urls)]
                    if (self.current in self.urls)
                    else self.urls[0]
                )
                await asyncio.sleep(0.05)


async def _epoch(zk: ZkClient) -> int:
    return codec.decode_controller_epoch((await zk.get(paths.CONTROLLER_EPOCH)).data)


async def _ready(c: ControllerProc) -> bool:
    s = await c.status()
    if not s or not s["active"]:
        return False
    code, _ = await c.get("/readyz")
    return code == 200


async def test_rolling_restart_while_a_batch_runs_fails_no_client_operation(
    procs: Procs, zk: ZkClient
) -> None:
    await set_broker_rate(zk, None, "400000")
    controllers = [procs.controller(9000, 2.0), procs.controller(9001, 2.0)]
    procs.cluster(4, 1, 2)
    active, _ = await active_one(*controllers)
    await eventually(lambda: _brokers(active, 4), what="brokers registered")
    await make_topic(zk, "b", {p: (1, 2) for p in range(12)}, initial_bytes=1_500_000)
    await make_topic(zk, "c", {p: (1, 2) for p in range(4)})
    client = RetryingClient([c.url for c in controllers])
    body = {
        "batch_id": "rolling",
        "partitions": [{"topic": "b", "partition": p, "replicas": [3, 4]} for p in range(12)],
        "limits": {"moves_per_broker": 4},
    }
    code, submitted = await client.call("POST", "/v1/batches", body)
    assert code == 200 and all(p["error_code"] == 0 for p in submitted["partitions"]), submitted

    failures: list[str] = []
    done = asyncio.Event()
    operations = 0

    async def clients() -> None:
        nonlocal operations
        flip = False
        while not done.is_set():
            flip = not flip
            target = [2, 1] if flip else [1, 2]
            moves = {"topics": [{"name": "c", "partitions": [{"partition": 0, "replicas": target}]}]}
            code, resp = await client.call("POST", "/v1/reassignments", moves)
            if code != 200 or resp["responses"][0]["partitions"][0]["error_code"] != 0:
                failures.append(f"POST /v1/reassignments: {code} {resp}")
            code, resp = await client.call("GET", "/v1/batches/rolling")
            if code != 200:
                failures.append(f"GET /v1/batches/rolling: {code} {resp}")
            operations += 2
            await asyncio.sleep(0.05)

    load = asyncio.create_task(clients())
    gaps: list[float] = []
    epoch_before = await _epoch(zk)
    try:
        for _ in range(len(controllers)):
            active, _ = await active_one(*controllers)
            i = controllers.index(active)
            stopped_at = time.monotonic()
            assert active.proc.terminate(timeout_s=30) == 0, "the controller did not stop cleanly"
            successor = controllers[1 - i]
            await eventually(functools.partial(_ready, successor), what="the standby took over")
            gaps.append(time.monotonic() - stopped_at)
            controllers[i] = procs.restart_controller(active)
            await eventually(
                functools.partial(_standing_by, controllers[i]), what="the restarted instance up"
            )
            await asyncio.sleep(1.0)
    finally:
        done.set()
        await load
    assert failures == [], failures[:5]
    assert operations > 0 and client.retries > 0  # requests did meet the hand-overs
    assert await _epoch(zk) - epoch_before == len(controllers)  # one election per hand-over
    print(f"hand-over gaps (SIGTERM -> successor ready): {', '.join(f'{g:.2f}s' for g in gaps)}")
    await set_broker_rate(zk, None, FAST)

    async def completed() -> bool:
        code, resp = await client.call("GET", "/v1/batches/rolling")
        return code == 200 and resp["state"] == "completed"

    await eventually(completed, timeout_s=60, what="the batch completed")


async def test_resign_endpoint_hands_over_and_a_lone_instance_takes_the_role_again(
    procs: Procs, zk: ZkClient
) -> None:
    a, b = procs.controller(9000, 2.0), procs.controller(9001, 2.0)
    active, _ = await active_one(a, b)
    other = b if active is a else a
    # the other instance up and following before the hand-over: one still starting (its process
    # slower than the first) is not there to take the role, and the first takes it back itself
    await eventually(functools.partial(_following, other, active), what="the other instance following")
    epoch = await _epoch(zk)
    code, resp = await active.post("/v1/controller/resign", {})
    assert code == 200 and resp["active_controller"]["id"] == other.controller_id, resp
    assert await _ready(other) or await eventually(lambda: _ready(other), what="the other one active")
    code, resp = await active.post("/v1/controller/resign", {})  # now a standby: 41, naming it
    assert code == 503 and resp["error_code"] == 41
    assert resp["active_controller"]["id"] == other.controller_id
    assert await _epoch(zk) == epoch + 1
    other.proc.kill()  # alone now: the first instance takes the role back (after its hold)
    await eventually(lambda: _ready(active), timeout_s=30, what="the remaining instance active again")


async def _brokers(c: ControllerProc, n: int) -> bool:
    code, body = await c.get("/v1/brokers")
    return code == 200 and len(body["brokers"]) == n


async def _following(c: ControllerProc, active: ControllerProc) -> bool:
    s = await c.status()
    return bool(
        s and not s["active"] and (s.get("active_controller") or {}).get("id") == active.controller_id
    )


async def _standing_by(c: ControllerProc) -> bool:
    s = await c.status()
    return s is not None
