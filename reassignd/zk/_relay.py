"""Single requests from the caller's loop to the session on the I/O loop, and their replies back.

The cheap path of a hand-over (measured with ``bench/zk_baseline.py``: a task on the I/O loop
per request cost more CPU than the request itself). The caller posts ``begin`` to the I/O
mailbox; there, when the session is usable, the request is sent at once and its reply future
gets a callback that posts the outcome back to the caller's mailbox — no task on either side.
Only a request that must wait (session suspended) or be resent (a read whose connection
dropped) gets a task on the I/O loop, running ``SessionSupervisor.exchange`` from the session
generation of its first send, so a retry never crosses into a new session. The caller's
timeout and cancellation are its own (``asyncio.timeout`` around the await); cancelling also
cancels that task, if any (a request already on the wire is left to its reply, which is
dropped, as before the I/O thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Any

from reassignd.zk import _wire
from reassignd.zk._connection import ConnectionDropped
from reassignd.zk._io import IoClosed, IoThread
from reassignd.zk._supervisor import RequestLost, SessionSupervisor

Holder = list[asyncio.Task[Any]]  # the I/O task of a request that needed one (0 or 1 entries)

_LOST = "connection lost before the reply: the request may or may not have been applied"


class Relay:
    def __init__(self, io: IoThread, supervisor: SessionSupervisor) -> None:
        self._io = io
        self._supervisor = supervisor

    # --- on the caller's loop --------------------------------------------------------------------

    def request(self, request: _wire.Request, retry: bool, holder: Holder) -> asyncio.Future[Any]:
        """The future (of the caller's loop) of ``request``'s decoded reply; raises IoClosed."""
        out: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        # the session generation as the caller last could know it: a request never crosses
        # into a session that began after it was made (a single attribute read)
        generation = self._supervisor.generation
        self._io.post(self._begin, request, retry, out, holder, generation)
        return out

    def cancel(self, holder: Holder) -> None:
        """The caller gave up: cancel the request's I/O task, if it has one."""
        with contextlib.suppress(IoClosed):
            self._io.post(_cancel, holder)

    # --- on the I/O loop -------------------------------------------------------------------------

    def _begin(
        self, request: _wire.Request, retry: bool, out: asyncio.Future[Any], holder: Holder, generation: int
    ) -> None:
        if out.done():  # the caller gave up before it was sent (a benign cross-thread read)
            return
        supervisor = self._supervisor
        if supervisor.generation != generation:
            self._io.deliver(_reject, out, RequestLost("the ZooKeeper session expired"))
            return
        sent = supervisor.send_now(request)
        if sent is None:
            holder.append(asyncio.create_task(self._exchange(request, retry, out, generation, 0)))
            return
        sent.add_done_callback(functools.partial(self._replied, request, retry, out, holder, generation))

    def _replied(
        self,
        request: _wire.Request,
        retry: bool,
        out: asyncio.Future[Any],
        holder: Holder,
        generation: int,
        sent: asyncio.Future[Any],
    ) -> None:
        if sent.cancelled():
            self._io.deliver(_reject, out, RequestLost(_LOST))
            return
        error = sent.exception()
        if error is None:
            self._io.deliver(_resolve, out, sent.result())
        elif isinstance(error, ConnectionDropped):
            if retry and not out.done():
                holder.append(asyncio.create_task(self._exchange(request, retry, out, generation, 1)))
            else:
                self._io.deliver(_reject, out, RequestLost(_LOST))
        else:
            self._io.deliver(_reject, out, error)

    async def _exchange(
        self,
        request: _wire.Request,
        retry: bool,
        out: asyncio.Future[Any],
        generation: int | None,
        dropped: int,
    ) -> None:
        try:
            value = await self._supervisor.exchange(
                request, retry=retry, generation=generation, dropped=dropped
            )
        except asyncio.CancelledError:
            # the caller gave up (then this is dropped), or the I/O loop is stopping
            self._io.deliver(_reject, out, IoClosed("the ZooKeeper client is closed"))
            raise
        except Exception as e:
            self._io.deliver(_reject, out, e)
        else:
            self._io.deliver(_resolve, out, value)


def _cancel(holder: Holder) -> None:
    if holder:
        holder[0].cancel()


def _resolve(out: asyncio.Future[Any], value: Any) -> None:
    if not out.done():
        out.set_result(value)


def _reject(out: asyncio.Future[Any], error: BaseException) -> None:
    if not out.done():
        out.set_exception(error)
