"""The control channel: one ordered send queue per live broker, one request in flight each.

Requests are POSTed as JSON to the broker's CONTROL endpoint. A request that fails
to reach the broker (connection refused, timeout, 5xx, 408/425/429) is retried with exponential
backoff until it succeeds or the broker is removed. Responses are handed to ``on_response``
(called on the event loop, never blocking) so the controller can turn them into events.

Permanent failures are never retried:

- a body over the agent's limit (``MAX_CONTROL_BODY_BYTES``, or answered 413) is split in two
  (``split_request``) and the halves are sent in its place, each answered on its own; a request
  naming a single partition that still does not fit is dropped, logged as an error, counted
  (``reassignd_control_requests{outcome="dropped"}``) and answered to ``on_response`` with error 10
  MESSAGE_TOO_LARGE for each of its partitions. A dropped chunk of a full LeaderAndIsr leaves its
  set incomplete, so the agent deletes nothing;
- any other answer whose body is not a control response (an unknown route, 405, a broken agent)
  is dropped the same way with error 42 INVALID_REQUEST. An agent's own refusal (400 with
  ``error_code`` 42, a stale epoch) is a response, as before.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from reassignd.control.protocol import ControlRequest, ControlResponse, PartitionError, path_of
from reassignd.control.request_sizes import encode_request, partitions_of, split_request
from reassignd.control.wire import INVALID_REQUEST, MAX_CONTROL_BODY_BYTES, MESSAGE_TOO_LARGE, WireError
from reassignd.controller.instance.metrics import ControllerMetrics

log = logging.getLogger(__name__)

ResponseCallback = Callable[[int, ControlRequest, ControlResponse], None]

TRANSIENT_4XX = frozenset({408, 425, 429})  # Request Timeout, Too Early, Too Many Requests
_JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True, slots=True)
class _Split:
    """The request was too large: send these in its place."""

    halves: tuple[ControlRequest, ControlRequest]


def failed_response(request: ControlRequest, code: int) -> ControlResponse:
    """The answer of a request the channel gave up on: ``code`` for it and each partition."""
    return ControlResponse(code, tuple(PartitionError(t, p, code) for t, p in partitions_of(request)))


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
            outcome = await self._deliver(queue, request)
            queue.pending.popleft()
            if isinstance(outcome, _Split):
                queue.pending.extendleft(reversed(outcome.halves))  # first half first, at once
                continue
            if self._on_response is not None:
                self._on_response(queue.broker_id, request, outcome)

    async def _deliver(self, queue: _BrokerQueue, request: ControlRequest) -> ControlResponse | _Split:
        assert self._session is not None
        kind = type(request).__name__
        backoff = self._backoff_s
        body = encode_request(request)
        if len(body) > MAX_CONTROL_BODY_BYTES:
            return self._too_large(queue, request, kind, len(body), "over the agents' body limit")
        while True:
            try:
                async with self._session.post(queue.url + path_of(request), data=body, headers=_JSON) as resp:
                    status = resp.status
                    if status == 413:
                        return self._too_large(queue, request, kind, len(body), "refused with HTTP 413")
                    if status < 500 and status not in TRANSIENT_4XX:
                        raw = await resp.read()
                        try:
                            response = ControlResponse.decode(raw)
                        except WireError as e:  # not JSON, or not the wire format
                            return self._drop(
                                queue, request, kind, f"HTTP {status} without a control response ({e})"
                            )
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
                    log.info("broker %d answered %s with HTTP %d; retrying", queue.broker_id, kind, status)
            except (aiohttp.ClientError, TimeoutError) as e:
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

    def _too_large(
        self, queue: _BrokerQueue, request: ControlRequest, kind: str, size: int, why: str
    ) -> ControlResponse | _Split:
        halves = split_request(request)
        if halves is None:
            return self._drop(
                queue,
                request,
                kind,
                f"{size} bytes {why}, and a single partition cannot be split",
                MESSAGE_TOO_LARGE,
            )
        log.warning(
            "%s of %d partitions for broker %d: %d bytes %s; sending it in two halves",
            kind,
            len(partitions_of(request)),
            queue.broker_id,
            size,
            why,
        )
        self._metrics.control_requests.labels(kind, "split").inc()
        return _Split(halves)

    def _drop(
        self, queue: _BrokerQueue, request: ControlRequest, kind: str, why: str, code: int = INVALID_REQUEST
    ) -> ControlResponse:
        tps = partitions_of(request)
        log.error(
            "dropping %s for broker %d (%d partitions: %s): %s",
            kind,
            queue.broker_id,
            len(tps),
            ", ".join(f"{t}-{p}" for t, p in tps[:5]) + (", ..." if len(tps) > 5 else ""),
            why,
        )
        self._metrics.control_requests.labels(kind, "dropped").inc()
        return failed_response(request, code)
