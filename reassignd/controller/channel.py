"""The control channel: one ordered send queue per live broker, one request in flight each.

Requests are POSTed as JSON to the broker's CONTROL endpoint (BROKERS.md). A request that fails
to reach the broker (connection refused, timeout, 5xx) is retried with exponential backoff until
it succeeds or the broker is removed. Responses are handed to ``on_response`` (called on the
event loop, never blocking) so the controller can turn them into events.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from reassignd.broker.protocol import ControlRequest, ControlResponse, WireError, path_of
from reassignd.controller.metrics import ControllerMetrics

log = logging.getLogger(__name__)

ResponseCallback = Callable[[int, ControlRequest, ControlResponse], None]


@dataclass(slots=True)
class _BrokerQueue:
    broker_id: int
    url: str
    pending: collections.deque[ControlRequest] = field(default_factory=collections.deque)
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


class ControlChannel:
    def __init__(
        self,
        *,
        request_timeout_s: float,
        backoff_ms: int,
        backoff_max_ms: int,
        metrics: ControllerMetrics,
        on_response: ResponseCallback | None = None,
    ) -> None:
        self._timeout = aiohttp.ClientTimeout(total=request_timeout_s)
        self._backoff_s = backoff_ms / 1000
        self._backoff_max_s = backoff_max_ms / 1000
        self._metrics = metrics
        self._on_response = on_response
        self._queues: dict[int, _BrokerQueue] = {}
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(
            timeout=self._timeout, connector=aiohttp.TCPConnector(limit=0, limit_per_host=2)
        )

    async def close(self) -> None:
        await self.remove_all()
        if self._session is not None:
            await self._session.close()
            self._session = None

    def brokers(self) -> set[int]:
        return set(self._queues)

    def add_broker(self, broker_id: int, url: str) -> None:
        """Start (or re-point) the queue of a broker. A broker whose URL changed keeps its queue."""
        queue = self._queues.get(broker_id)
        if queue is not None:
            queue.url = url
            return
        queue = _BrokerQueue(broker_id, url)
        queue.task = asyncio.create_task(self._run(queue), name=f"control-channel-{broker_id}")
        self._queues[broker_id] = queue

    async def remove_broker(self, broker_id: int) -> None:
        queue = self._queues.pop(broker_id, None)
        if queue is None or queue.task is None:
            return
        queue.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await queue.task

    async def remove_all(self) -> None:
        for broker_id in list(self._queues):
            await self.remove_broker(broker_id)

    def send(self, broker_id: int, request: ControlRequest) -> None:
        queue = self._queues.get(broker_id)
        if queue is None:
            log.debug("dropping %s for broker %d: not a live broker", type(request).__name__, broker_id)
            return
        queue.pending.append(request)
        queue.wakeup.set()

    def idle(self) -> bool:
        """Nothing queued or in flight for any broker."""
        return all(not q.pending for q in self._queues.values())

    def pending(self, broker_id: int) -> int:
        queue = self._queues.get(broker_id)
        return 0 if queue is None else len(queue.pending)

    async def _run(self, queue: _BrokerQueue) -> None:
        while True:
            while not queue.pending:
                queue.wakeup.clear()
                await queue.wakeup.wait()
            request = queue.pending[0]
            response = await self._deliver(queue, request)
            queue.pending.popleft()
            if self._on_response is not None:
                self._on_response(queue.broker_id, request, response)

    async def _deliver(self, queue: _BrokerQueue, request: ControlRequest) -> ControlResponse:
        assert self._session is not None
        kind = type(request).__name__
        backoff = self._backoff_s
        body = request.to_json()
        while True:
            try:
                async with self._session.post(queue.url + path_of(request), json=body) as resp:
                    if resp.status < 500:
                        payload = await resp.json(content_type=None)
                        response = ControlResponse.from_json(payload)
                        outcome = "ok" if response.error_code == 0 else f"error_{response.error_code}"
                        self._metrics.control_requests.labels(kind, outcome).inc()
                        if response.error_code != 0:
                            log.warning(
                                "broker %d answered %s with error %d",
                                queue.broker_id,
                                kind,
                                response.error_code,
                            )
                        return response
                    log.info(
                        "broker %d answered %s with HTTP %d; retrying", queue.broker_id, kind, resp.status
                    )
            except (aiohttp.ClientError, TimeoutError, WireError, ValueError) as e:
                log.info(
                    "sending %s to broker %d failed (%s); retrying in %.1fs",
                    kind,
                    queue.broker_id,
                    e,
                    backoff,
                )
            self._metrics.control_requests.labels(kind, "retry").inc()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self._backoff_max_s)
