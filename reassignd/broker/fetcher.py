"""Follower fetch loops: one task per leader this agent follows, like Kafka's replica fetchers.

Each loop asks its leader's agent (``POST /replication/fetch`` on its CONTROL endpoint) for every
partition it follows there, once per fetch interval, within the broker's inbound bandwidth and
follower throttle (replication.py decides the sizes). The leader's endpoint comes from the
controller's requests, else from the leader's registration znode.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import aiohttp

from reassignd.broker.protocol import FETCH_PATH, FetchResponse, WireError
from reassignd.broker.replication import apply_fetch, fetch_leaders, fetch_request
from reassignd.broker.settings import BrokerSettings
from reassignd.broker.state import ReplicaManager

RECONCILE_S = 1.0
MAX_BACKOFF_S = 2.0

Resolver = Callable[[int], Awaitable[str | None]]


class Fetchers:
    def __init__(
        self,
        mgr: ReplicaManager,
        http: aiohttp.ClientSession,
        resolve: Resolver,
        settings: BrokerSettings,
        clock: Callable[[], float],
    ) -> None:
        self._mgr = mgr
        self._http = http
        self._resolve = resolve
        self._settings = settings
        self._clock = clock
        self._log = logging.getLogger(f"reassignd.broker.{settings.broker_id}.fetcher")
        self._changed = asyncio.Event()

    def reconcile(self) -> None:
        """The set of followed partitions or their leaders may have changed."""
        self._changed.set()

    async def run(self) -> None:
        """Keeps one fetch task per followed leader; owns them."""
        tasks: dict[int, asyncio.Task[None]] = {}
        async with asyncio.TaskGroup() as tg:
            while True:
                self._changed.clear()
                wanted = fetch_leaders(self._mgr)
                for leader in [b for b, t in tasks.items() if b not in wanted or t.done()]:
                    tasks.pop(leader).cancel()
                for leader in sorted(wanted - tasks.keys()):
                    name = f"broker-{self._settings.broker_id}-fetch-from-{leader}"
                    tasks[leader] = tg.create_task(self._fetch_from(leader), name=name)
                try:
                    async with asyncio.timeout(RECONCILE_S):
                        await self._changed.wait()
                except TimeoutError:
                    pass

    async def _fetch_from(self, leader: int) -> None:
        interval = self._settings.fetch_interval_s
        backoff = interval
        while True:
            started = self._clock()
            request = fetch_request(self._mgr, leader, started)
            url = self._mgr.endpoints.get(leader)
            if url is None and request is not None:
                url = await self._resolve(leader)
            if request is None:
                await asyncio.sleep(interval)
                continue
            if url is None:  # the leader is not registered (yet): wait for it
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            try:
                async with self._http.post(url + FETCH_PATH, json=request.to_json()) as resp:
                    payload = await resp.json(content_type=None)
                response = FetchResponse.from_json(payload)
            except (aiohttp.ClientError, TimeoutError, WireError, ValueError) as e:
                self._log.info(
                    "fetch from broker %d at %s failed (%s); retrying in %.1fs", leader, url, e, backoff
                )
                self._mgr.endpoints.pop(leader, None)  # re-resolve: the leader may have restarted
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            backoff = interval
            refused = apply_fetch(self._mgr, leader, request, response, self._clock())
            if refused:
                self._log.debug(
                    "broker %d refused %d partitions (not leader yet, or fenced)", leader, len(refused)
                )
            await asyncio.sleep(max(0.0, interval - (self._clock() - started)))
