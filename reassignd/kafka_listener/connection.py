"""One client connection: read frames, answer them in request order, close on bad input.

The reader reads ahead up to ``max_in_flight`` requests (pipelining) and starts a task per
request; the writer sends each task's response in the order the requests came (a client matches
responses to requests by order). A request that changes the cluster starts only after every
earlier request of the connection finished, and later ones wait for it, so a connection's
mutations apply in its order (Kafka serves one request per connection at a time).

Bad input — a frame over the size limit (512 KiB before SASL authentication when SASL is
required), a garbled or truncated frame, an API or version not served, a request before SASL
where SASL is required, a client that stalls mid-frame or stops reading — closes the connection
with one log line; it never reaches the controller. A frame's bytes are taken from the shared
budget as they arrive, never for bytes only announced.

A request that reaches its handler is always answered: when the handler fails (the controller
refused it, it is not the controller, a bug) the request gets that error on every item it names
(``dispatch.REFUSALS``), and reassignd's own codes (>= 10000) go out as Kafka's nearest
(``reassignd.errors.kafka_wire_code``); the connection stays open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any, NoReturn

from kafka.protocol.sasl import SaslAuthenticateResponse, SaslHandshakeResponse

from reassignd.errors import ReassigndError, kafka_wire_code
from reassignd.kafka_listener import protocol
from reassignd.kafka_listener.audit import audit
from reassignd.kafka_listener.context import Listener, RequestContext
from reassignd.kafka_listener.dispatch import BEFORE_AUTH, HANDLERS, MUTATIONS, REFUSALS
from reassignd.kafka_listener.limits import ByteBudget, RateLimitedLog
from reassignd.kafka_listener.sasl import MECHANISM, AuthFailure, authenticate_plain
from reassignd.tokens import ANONYMOUS, Principal

log = logging.getLogger(__name__)

UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
SASL_AUTHENTICATION_FAILED = 58
UNKNOWN_SERVER_ERROR = -1
MAX_FRAME_BEFORE_AUTH_BYTES = 512 * 1024  # Kafka's cap on a frame before SASL authentication
READ_CHUNK_BYTES = 64 * 1024  # a frame is read (and its bytes budgeted) this much at a time


class Closing(Exception):
    """Close the connection (the reason is logged once by whoever raises it)."""


class ClientConnection:
    def __init__(  # noqa: PLR0913 (a connection's collaborators, each explicit)
        self,
        listener: Listener,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        tokens: Mapping[str, Principal] | None,
        max_frame_bytes: int,
        max_in_flight: int,
        idle_timeout_s: float,
        frame_timeout_s: float,
        write_timeout_s: float,
        budget: ByteBudget,
        warn: RateLimitedLog,
        broker_id: int | None = None,
    ) -> None:
        self.listener = listener
        self.reader = reader
        self.writer = writer
        self.tokens = tokens
        self.max_frame_bytes = max_frame_bytes
        self.idle_timeout_s = idle_timeout_s
        self.frame_timeout_s = frame_timeout_s
        self.write_timeout_s = write_timeout_s
        self.budget = budget
        self.warn = warn
        self.broker_id = broker_id  # the broker whose port this is (None: the bootstrap port)
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else str(peer)
        self.peer_host = str(peer[0]) if isinstance(peer, tuple) and peer else str(peer)
        self.principal: Principal | None = ANONYMOUS if tokens is None else None
        self._handshaken = False
        self._raw_sasl_next = False  # after SaslHandshake v0 the token comes as a bare frame
        self._pending: asyncio.Queue[tuple[asyncio.Future[bytes | None], int] | None] = asyncio.Queue(
            max_in_flight
        )
        self._inflight: list[asyncio.Task[bytes | None]] = []
        self._last_mutation: asyncio.Task[bytes | None] | None = None
        self._count = 0

    # --- the two loops ---------------------------------------------------------------------------

    async def run(self) -> None:
        writing = asyncio.create_task(self._write_loop(), name=f"kafka-writer-{self.peer}")
        try:
            await self._read_loop()
        except Closing:
            pass
        except (ConnectionError, OSError) as e:
            log.debug("kafka connection %s: %s", self.peer, e)
        finally:
            with contextlib.suppress(asyncio.QueueFull):
                self._pending.put_nowait(None)
            if self._pending.full():  # the writer is stuck behind a full queue: stop it
                writing.cancel()
            try:
                await asyncio.wait_for(writing, self.write_timeout_s)
            except (TimeoutError, asyncio.CancelledError, Exception):
                writing.cancel()
            while not self._pending.empty():  # never written: their bytes go back to the budget
                item = self._pending.get_nowait()
                if item is not None:
                    item[0].cancel()
                    self.budget.release(item[1])
            for task in self._inflight:
                task.cancel()
            for task in self._inflight:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            self.writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.writer.wait_closed(), 1.0)

    async def _read_loop(self) -> None:
        while not self.writer.is_closing():
            try:
                async with asyncio.timeout(self.idle_timeout_s):
                    head = await self.reader.readexactly(4)
            except asyncio.IncompleteReadError as e:
                if e.partial:
                    self._close(f"a truncated frame size ({len(e.partial)} bytes) before EOF")
                return  # a clean close
            except TimeoutError:
                self._close(f"idle for {self.idle_timeout_s:g} s")
            size = int.from_bytes(head, "big", signed=True)
            limit = self.max_frame_bytes
            if self.principal is None:  # not authenticated yet: Kafka's cap before SASL
                limit = min(limit, MAX_FRAME_BEFORE_AUTH_BYTES)
            if size < 0 or size > limit:
                before = " before SASL authentication" if self.principal is None else ""
                self._close(f"frame of {size} bytes is over the limit of {limit}{before}")
            payload = await self._read_payload(size)
            await self._on_frame(payload, size)

    async def _read_payload(self, size: int) -> bytes:
        """The frame's ``size`` bytes, read a chunk at a time, each chunk's bytes taken from the
        shared budget as it is read (a frame announced but not sent holds nothing), the whole
        under the frame timeout (waits for the budget included). On return ``size`` bytes are
        held; on a close, none."""
        held = n = 0
        parts: list[bytes] = []
        try:
            async with asyncio.timeout(self.frame_timeout_s):
                while held < size:
                    n = min(READ_CHUNK_BYTES, size - held)
                    await self.budget.acquire(n)
                    held += n
                    parts.append(await self.reader.readexactly(n))
        except asyncio.IncompleteReadError as e:
            self.budget.release(held)
            self._close(f"a truncated frame ({held - n + len(e.partial)} of {size} bytes)")
        except TimeoutError:
            self.budget.release(held)
            self._close(
                f"stalled for {self.frame_timeout_s:g} s in the middle of a {size}-byte frame "
                f"({held} bytes taken from the budget)"
            )
        except BaseException:
            self.budget.release(held)
            raise
        return b"".join(parts)

    async def _write_loop(self) -> None:
        while True:
            item = await self._pending.get()
            if item is None:
                return
            future, size = item
            try:
                data = await future
            except asyncio.CancelledError:
                data = None
            finally:
                self.budget.release(size)
            if data is None:
                self.writer.close()
                return
            self.writer.write(data)
            try:
                async with asyncio.timeout(self.write_timeout_s):
                    await self.writer.drain()
            except TimeoutError:
                self.warn(
                    "kafka connection %s closed: does not read its responses (%g s)",
                    self.peer,
                    self.write_timeout_s,
                )
                self.writer.close()
                return
            except (ConnectionError, OSError):
                self.writer.close()
                return

    def _close(self, reason: str) -> NoReturn:
        self.warn("kafka connection %s closed: %s", self.peer, reason)
        raise Closing(reason)

    async def _queue(self, future: asyncio.Future[bytes | None], size: int) -> None:
        await self._pending.put((future, size))

    async def _answer_now(self, data: bytes | None, size: int) -> None:
        future: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
        future.set_result(data)
        await self._queue(future, size)

    # --- one frame ---------------------------------------------------------------------------------

    async def _on_frame(self, payload: bytes, size: int) -> None:
        if self._raw_sasl_next:
            self._raw_sasl_next = False
            await self._raw_sasl(payload, size)
            return
        try:
            prefix = protocol.parse_prefix(payload)
        except protocol.FrameError as e:
            self.budget.release(size)
            self._close(str(e))
        api = protocol.served(prefix)
        if api is None:
            if prefix.api_key == protocol.API_VERSIONS and prefix.api_version > 0:
                await self._answer_now(protocol.unsupported_api_versions(prefix.correlation_id), size)
                return
            self.budget.release(size)
            self._close(f"API key {prefix.api_key} version {prefix.api_version} is not served")
        if self.principal is None and api.key not in BEFORE_AUTH:
            self.budget.release(size)
            self._close(f"{api.name} before SASL authentication")
        try:
            request = protocol.decode_request(api, payload, prefix.api_version)
        except protocol.FrameError as e:
            self.budget.release(size)
            self._close(str(e))
        if api.key == protocol.SASL_HANDSHAKE:
            await self._answer_now(self._handshake(request, prefix), size)
            return
        if api.key == protocol.SASL_AUTHENTICATE:
            data, failure = self._authenticate(request, prefix)
            await self._answer_now(data, size)
            if failure is not None:
                self._close(f"SASL authentication failed: {failure}")
            return
        principal = self.principal or ANONYMOUS  # ApiVersions before SASL
        client_id = request.header.client_id or ""
        ctx = RequestContext(self.listener, principal, client_id, prefix.api_version, self.broker_id)
        self._count += 1
        mutation = api.key in MUTATIONS
        earlier = [t for t in self._inflight if not t.done()] if mutation else []
        if not mutation and self._last_mutation is not None and not self._last_mutation.done():
            earlier = [self._last_mutation]
        task = asyncio.create_task(
            self._serve(api, ctx, request, prefix, earlier),
            name=f"kafka-{api.name}-{self.peer}-{self._count}",
        )
        self._inflight = [t for t in self._inflight if not t.done()]
        self._inflight.append(task)
        if mutation:
            self._last_mutation = task
        await self._queue(task, size)

    async def _serve(
        self,
        api: protocol.Api,
        ctx: RequestContext,
        request: Any,
        prefix: protocol.Prefix,
        earlier: list[asyncio.Task[bytes | None]],
    ) -> bytes | None:
        if earlier:
            await asyncio.wait(earlier)
        response = None
        try:
            response = await HANDLERS[api.key](ctx, request)
            if api.key in MUTATIONS:
                audit(self.listener.audit, api.name, ctx, self.peer_host, request, response)
            if isinstance(response, protocol.Encoded):
                return response.for_request(prefix.correlation_id)
            protocol.to_kafka_codes(api.response_fields, response, prefix.api_version)
            return protocol.encode_response(response, prefix.api_version, prefix.correlation_id)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            if api.key in MUTATIONS and response is None:  # the handler failed: audited as such
                audit(self.listener.audit, api.name, ctx, self.peer_host, request, None)
            return self._refuse(api, request, prefix, e)

    def _refuse(self, api: protocol.Api, request: Any, prefix: protocol.Prefix, e: Exception) -> bytes | None:
        """Refusal is an answer: a request whose handler failed gets the error on every item it
        names (a ReassigndError's code as Kafka's, else UNKNOWN_SERVER_ERROR with a message),
        logged once; the connection stays open. None (close) only if even that cannot be built."""
        if isinstance(e, ReassigndError):
            code = kafka_wire_code(e.error_code)
            message = e.message or e.error_name
            log.warning(
                "kafka connection %s: %s v%d refused: %s (%s)",
                self.peer,
                api.name,
                prefix.api_version,
                message,
                e.error_name,
            )
        else:
            code, message = UNKNOWN_SERVER_ERROR, f"Unexpected server error: {type(e).__name__}: {e}"
            log.error(
                "kafka connection %s: %s v%d failed; answered %d UNKNOWN_SERVER_ERROR",
                self.peer,
                api.name,
                prefix.api_version,
                code,
                exc_info=e,
            )
        try:
            response = REFUSALS[api.key](request, prefix.api_version, code, message)
            return protocol.encode_response(response, prefix.api_version, prefix.correlation_id)
        except Exception:
            log.exception("kafka connection %s: cannot answer %s's refusal; closing", self.peer, api.name)
            return None

    # --- SASL ---------------------------------------------------------------------------------------

    def _handshake(self, request: Any, prefix: protocol.Prefix) -> bytes:
        mechanisms = [MECHANISM] if self.tokens is not None else []
        if self.tokens is None or self.principal is not None or self._handshaken:
            code = ILLEGAL_SASL_STATE
        elif request.mechanism != MECHANISM:
            code = UNSUPPORTED_SASL_MECHANISM
        else:
            code = 0
            self._handshaken = True
            self._raw_sasl_next = prefix.api_version == 0
        response = SaslHandshakeResponse(error_code=code, mechanisms=mechanisms)
        return protocol.encode_response(response, prefix.api_version, prefix.correlation_id)

    def _authenticate(self, request: Any, prefix: protocol.Prefix) -> tuple[bytes, str | None]:
        outcome: Principal | AuthFailure
        if self.tokens is None or not self._handshaken or self.principal is not None:
            outcome = AuthFailure("SaslAuthenticate without a SaslHandshake")
            code = ILLEGAL_SASL_STATE
        else:
            outcome = authenticate_plain(self.tokens, bytes(request.auth_bytes))
            code = SASL_AUTHENTICATION_FAILED if isinstance(outcome, AuthFailure) else 0
        failure = outcome.message if isinstance(outcome, AuthFailure) else None
        if isinstance(outcome, Principal):
            self.principal = outcome
            log.debug("kafka connection %s authenticated as %s", self.peer, outcome.user)
        response = SaslAuthenticateResponse(
            error_code=code, error_message=failure, auth_bytes=b"", session_lifetime_ms=0
        )
        return protocol.encode_response(response, prefix.api_version, prefix.correlation_id), failure

    async def _raw_sasl(self, payload: bytes, size: int) -> None:
        """SaslHandshake v0: the PLAIN token as a bare frame; success is an empty frame, failure
        closes the connection (Kafka's behaviour)."""
        assert self.tokens is not None
        outcome = authenticate_plain(self.tokens, payload)
        if isinstance(outcome, AuthFailure):
            self.budget.release(size)
            self._close(f"SASL authentication failed: {outcome.message}")
        self.principal = outcome
        await self._answer_now(b"\x00\x00\x00\x00", size)
