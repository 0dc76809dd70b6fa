"""Follower fetch loops: one task per leader this agent follows, like Kafka's replica fetchers.

Each loop keeps an incremental fetch session with its leader's agent (``POST /replication/fetch`` on
its CONTROL endpoint; sessions.py decides what each request lists, replication.py the sizes within
the broker's inbound bandwidth and follower throttle, shared fairly among the partitions of every
loop: bandwidth.py). A loop fetches once per fetch interval while
anything moves, and at once when a control request changed what it follows; when all its
partitions are quiet (caught up, nothing new at the leader) it slows down to one small request per
idle interval, which keeps the session (and the follower's place in the ISR) alive. The leader's
endpoint comes from the controller's requests, else from the leader's registration znode.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable

import aiohttp
import msgspec

from reassignd.broker.replication import fetch_failed
from reassignd.broker.sessions import FollowerSession, apply_session_fetch, session_request
from reassignd.broker.settings import BrokerSettings
from reassignd.broker.state import ReplicaManager
from reassignd.control.fetch import FetchResponse
from reassignd.control.wire import FETCH_PATH, WireError
from reassignd.int_limits import INT32_MAX

RECONCILE_S = 1.0
MAX_BACKOFF_S = 2.0
MAX_IDLE_INTERVAL_S = 0.5  # like Kafka's replica.fetch.wait.max.ms: an idle session's heartbeat
JSON_HEADERS = {"Content-Type": "application/json"}
_ENCODER = msgspec.json.Encoder()  # fetch bodies: 8x json.dumps, the agents send thousands a second

Resolver = Callable[[int], Awaitable[str | None]]


def idle_interval_s(settings: BrokerSettings) -> float:
    """The slowest an idle session fetches: well within the lag time, never faster than the interval."""
    return max(settings.fetch_interval_s, min(MAX_IDLE_INTERVAL_S, settings.replica_lag_time_max_s / 10))


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
        self._wakes: dict[int, asyncio.Event] = {}  # leader -> its loop's wake-up

    def reconcile(self) -> None:
        """The set of followed partitions or their leaders may have changed."""
        self._changed.set()
        for leader in self._mgr.fetch_dirty:
            wake = self._wakes.get(leader)
            if wake is not None:
                wake.set()

    async def run(self) -> None:
        """Keeps one fetch task per followed leader; owns them."""
        tasks: dict[int, asyncio.Task[None]] = {}
        async with asyncio.TaskGroup() as tg:
            while True:
                self._changed.clear()
                wanted = set(self._mgr.followed)
                for leader in [b for b, t in tasks.items() if b not in wanted or t.done()]:
                    tasks.pop(leader).cancel()
                    self._wakes.pop(leader, None)
                    self._mgr.fetch_dirty.pop(leader, None)  # a new loop starts a full session
                for leader in sorted(wanted - tasks.keys()):
                    name = f"broker-{self._settings.broker_id}-fetch-from-{leader}"
                    self._wakes[leader] = asyncio.Event()
                    tasks[leader] = tg.create_task(self._fetch_from(leader, self._wakes[leader]), name=name)
                try:
                    async with asyncio.timeout(RECONCILE_S):
                        await self._changed.wait()
                except TimeoutError:
                    pass

    async def _pause(self, wake: asyncio.Event, seconds: float) -> None:
        """Sleep ``seconds``, or less if something changed here (``wake``)."""
        if seconds > 0 and not wake.is_set():
            try:
                async with asyncio.timeout(seconds):
                    await wake.wait()
            except TimeoutError:
                pass
        wake.clear()

    async def _fetch_from(self, leader: int, wake: asyncio.Event) -> None:
        interval = self._settings.fetch_interval_s
        idle_max = idle_interval_s(self._settings)
        session = FollowerSession(leader, random.randrange(1, INT32_MAX + 1))
        backoff = wait = interval
        while True:
            started = self._clock()
            request = session_request(self._mgr, session, started)
            url = self._mgr.endpoints.get(leader)
            if url is None and request is not None:
                url = await self._resolve(leader)
            if request is None:
                await self._pause(wake, interval)
                continue
            if url is None:  # the leader is not registered (yet): wait for it
                fetch_failed(self._mgr, request)
                session.restart()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            try:
                body = _ENCODER.encode(request.to_json())
                async with self._http.post(url + FETCH_PATH, data=body, headers=JSON_HEADERS) as resp:
                    payload = msgspec.json.decode(await resp.read())
                response = FetchResponse.from_json(payload)
            except (aiohttp.ClientError, TimeoutError, WireError, ValueError, msgspec.DecodeError) as e:
                fetch_failed(self._mgr, request)  # its grants go back to the inbound bucket
                self._log.info(
                    "fetch from broker %d at %s failed (%s); retrying in %.1fs", leader, url, e, backoff
                )
                session.restart()
                self._mgr.endpoints.pop(leader, None)  # re-resolve: the leader may have restarted
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            except BaseException:  # cancelled (the leader changed, or the agent stops)
                fetch_failed(self._mgr, request)
                raise
            backoff = interval
            outcome = apply_session_fetch(self._mgr, session, request, response, self._clock())
            if outcome.refused:
                self._log.debug(
                    "broker %d refused %d partitions (not leader yet, or fenced)",
                    leader,
                    len(outcome.refused),
                )
            wait = interval if outcome.busy else min(idle_max, wait * 2)
            await self._pause(wake, wait - (self._clock() - started))
