"""The agent's HTTP listener (its CONTROL endpoint, also its PLAINTEXT one).

- ``POST /control/leader_and_isr``, ``/control/stop_replica``, ``/control/update_metadata``: the
  controller's requests, processed one at a time; a malformed body is 400 with
  error_code 42, a body over ``MAX_CONTROL_BODY_BYTES`` is 413 (the controller splits it). A full
  LeaderAndIsr that completes its set deletes the strays (state.py) and logs each.
- ``GET /replicas``: the agent's progress report.
- ``POST /log-dirs/alter``: move replicas between the agent's log dirs (control/log_dir_moves.py);
  sent by the Kafka listener for AlterReplicaLogDirs, straight to the broker as in Kafka.
- ``POST /replication/fetch``: served to followers when this agent leads.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, TypeVar

import msgspec
from aiohttp import web

from reassignd.broker.sessions import serve
from reassignd.broker.state import ReplicaManager
from reassignd.control.fetch import FetchRequest
from reassignd.control.log_dir_moves import ALTER_LOG_DIRS_PATH, AlterLogDirsRequest
from reassignd.control.protocol import (
    ControlResponse,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from reassignd.control.wire import (
    FETCH_PATH,
    INVALID_REQUEST,
    LEADER_AND_ISR_PATH,
    MAX_CONTROL_BODY_BYTES,
    REPLICAS_PATH,
    STOP_REPLICA_PATH,
    UPDATE_METADATA_PATH,
    WireError,
)
from reassignd.zk.errors import ZkError

REGISTRATION_WAIT_S = 5.0

T = TypeVar("T")


class AgentHooks(Protocol):
    """What the control routes need from the rest of the agent."""

    @property
    def registered(self) -> asyncio.Event: ...

    async def ensure_topics(self, topics: Iterable[str]) -> None: ...

    def replicas_changed(self) -> None: ...

    def followers_caught_up(self) -> None: ...

    def log_dir_moves_changed(self) -> None: ...


def _bad_request(message: str) -> web.HTTPBadRequest:
    body = {"error_code": INVALID_REQUEST, "partition_errors": [], "message": message}
    return web.HTTPBadRequest(text=json.dumps(body), content_type="application/json")


async def _parse(request: web.Request, parse: Callable[[Any], T]) -> T:
    try:
        return parse(msgspec.json.decode(await request.read()))
    except msgspec.DecodeError as e:  # not JSON, or not UTF-8
        raise _bad_request(f"invalid JSON: {e}") from e
    except WireError as e:
        raise _bad_request(str(e)) from e


async def _decode(request: web.Request, decode: Callable[[bytes], T]) -> T:
    """The hot requests (LeaderAndIsr, UpdateMetadata): bytes straight into structs."""
    try:
        return decode(await request.read())
    except WireError as e:
        raise _bad_request(str(e)) from e


class ControlRoutes:
    def __init__(self, mgr: ReplicaManager, hooks: AgentHooks, clock: Callable[[], float]) -> None:
        self._mgr = mgr
        self._hooks = hooks
        self._clock = clock
        self._lock = asyncio.Lock()  # control requests are processed one at a time, in order
        self._log = logging.getLogger(f"reassignd.broker.{mgr.broker_id}.control")

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_CONTROL_BODY_BYTES)
        app.router.add_post(LEADER_AND_ISR_PATH, self.leader_and_isr)
        app.router.add_post(STOP_REPLICA_PATH, self.stop_replica)
        app.router.add_post(UPDATE_METADATA_PATH, self.update_metadata)
        app.router.add_get(REPLICAS_PATH, self.replicas)
        app.router.add_post(FETCH_PATH, self.fetch)
        app.router.add_post(ALTER_LOG_DIRS_PATH, self.alter_log_dirs)
        return app

    async def _registered(self) -> None:
        """A request may race our (re-)registration: give it a moment to learn its broker epoch."""
        try:
            async with asyncio.timeout(REGISTRATION_WAIT_S):
                await self._hooks.registered.wait()
        except TimeoutError:
            pass  # the broker epoch is unknown: the request gets STALE_BROKER_EPOCH

    async def _handle(self, kind: str, apply: Callable[[], Awaitable[ControlResponse]]) -> web.Response:
        await self._registered()
        async with self._lock:
            try:
                response = await apply()
            except ZkError as e:
                self._log.warning("%s: reading topic configs failed (%s)", kind, e)
                return web.json_response(
                    {"error_code": -1, "partition_errors": [], "message": str(e)}, status=503
                )
        if response.error_code:
            self._log.info("%s refused with error %d", kind, response.error_code)
        self._hooks.replicas_changed()
        return _json(response.to_json())

    async def leader_and_isr(self, request: web.Request) -> web.Response:
        body = await _decode(request, LeaderAndIsrRequest.decode)

        async def apply() -> ControlResponse:
            hosted = {p.topic for p in body.partition_states if self._mgr.broker_id in p.replicas}
            await self._hooks.ensure_topics(hosted)
            response = self._mgr.leader_and_isr(body, self._clock())
            if body.full is not None and response.full_complete and response.error_code == 0:
                self._log_full(body, response)
            return response

        return await self._handle("LeaderAndIsr", apply)

    def _log_full(self, body: LeaderAndIsrRequest, response: ControlResponse) -> None:
        assert body.full is not None
        what = f"full LeaderAndIsr {body.full.id} of controller epoch {body.header.controller_epoch}"
        for topic, partition in response.deleted_replicas:
            self._log.info("deleted stray replica %s-%d: not named by %s", topic, partition, what)
        if response.deleted_replicas:
            self._log.info(
                "%s complete (%d partitions): deleted %d stray replicas",
                what,
                body.full.total_partitions,
                len(response.deleted_replicas),
            )

    async def stop_replica(self, request: web.Request) -> web.Response:
        body = await _parse(request, StopReplicaRequest.from_json)

        async def apply() -> ControlResponse:
            return self._mgr.stop_replica(body, self._clock())

        return await self._handle("StopReplica", apply)

    async def update_metadata(self, request: web.Request) -> web.Response:
        body = await _decode(request, UpdateMetadataRequest.decode)

        async def apply() -> ControlResponse:
            return self._mgr.update_metadata(body, self._clock())

        return await self._handle("UpdateMetadata", apply)

    async def replicas(self, request: web.Request) -> web.Response:
        return _json(self._mgr.report(self._clock()).to_json())

    async def alter_log_dirs(self, request: web.Request) -> web.Response:
        body = await _parse(request, AlterLogDirsRequest.from_json)
        now = self._clock()
        self._mgr.advance_moves(now)  # copies so far at the old set's shares
        response = self._mgr.alter_log_dirs(body, now)
        for m, r in zip(body.moves, response.results, strict=True):
            if r.error_message is not None:
                self._log.warning(
                    "move of %s-%d to log dir %s refused (error %d): %s",
                    m.topic,
                    m.partition,
                    m.log_dir,
                    r.error_code,
                    r.error_message,
                )
                continue
            self._log.info(
                "move of %s-%d to log dir %s: error %d", m.topic, m.partition, m.log_dir, r.error_code
            )
        self._hooks.log_dir_moves_changed()
        return _json(response.to_json())

    async def fetch(self, request: web.Request) -> web.Response:
        body = await _parse(request, FetchRequest.from_json)
        response = serve(self._mgr, body, self._clock())
        if self._mgr.isr_candidates:
            self._hooks.followers_caught_up()
        return _json(response.to_json())


_ENCODER = msgspec.json.Encoder()


def _json(body: dict[str, Any]) -> web.Response:
    """A JSON answer encoded by msgspec (the agents answer thousands of fetches and control
    requests per second in a big move; json.dumps was a tenth of their CPU)."""
    return web.Response(body=_ENCODER.encode(body), content_type="application/json")
