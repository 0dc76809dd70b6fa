"""The ZooKeeper client's own event loop, in its own daemon thread (``zk-io-<role>``).

The session (connections, pings, reconnects, reply decoding, expiry detection, the reaper) runs
here, so a caller's loop busy for seconds never stops a ping: Kafka's ZooKeeper client keeps its
own send thread for the same reason.

Two directions, each a thread-safe FIFO:

- ``submit(coro)`` hands a coroutine to the I/O loop and returns a future of the *caller's*
  loop. Cancelling that future cancels the coroutine's task on the I/O loop. After ``stop``
  nothing is accepted (``IoClosed``).
- ``deliver(callback, *args)`` schedules a callback on the caller's loop. The result of a
  submitted coroutine is delivered the same way, so everything the I/O thread hands the caller —
  watch events, session state reports, replies — runs on the caller's loop in the order the I/O
  thread produced it.

Each direction is a ``Mailbox``: a deque under a lock, drained by one callback on the receiving
loop, woken with ``call_soon_threadsafe`` only when it was empty. Thousands of requests in flight
cost a few wake-ups (each a write to the loop's self-pipe and a thread switch), not one each way
per request: measured with ``bench/zk_baseline.py``, one ``call_soon_threadsafe`` per request
and reply made pipelined single reads 4× slower.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

_STOP_TIMEOUT_S = 2.0  # stop(): at most this for the I/O loop to finish its tasks and end


class IoClosed(Exception):
    """The I/O loop is stopped (the client is closed): nothing more runs on it."""


class Mailbox:
    """Callbacks for one loop, posted from any thread, run there in the order posted."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._lock = threading.Lock()
        self._items: list[tuple[Callable[..., object], tuple[object, ...]]] = []

    def post(self, callback: Callable[..., object], *args: object) -> None:
        """Raises RuntimeError when the loop is closed (nothing will run)."""
        with self._lock:
            self._items.append((callback, args))
            if len(self._items) > 1:
                return  # a drain is already scheduled
        try:
            self.loop.call_soon_threadsafe(self._drain)
        except RuntimeError:
            with self._lock:
                self._items.clear()
            raise

    def _drain(self) -> None:
        with self._lock:
            items, self._items = self._items, []
        for callback, args in items:
            try:
                callback(*args)
            except Exception:
                log.exception("callback %r failed", callback)


class IoThread:
    def __init__(self, name: str) -> None:
        self.name = name
        self.loop: asyncio.AbstractEventLoop | None = None
        self._caller: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # guards _closed against a submit racing stop
        self._closed = False
        self._ended: asyncio.Future[None] | None = None  # on the caller's loop: the thread ended
        self._to_io: Mailbox | None = None
        self._to_caller: Mailbox | None = None

    def start(self) -> None:
        """Start the thread and its loop (returns once the loop runs; milliseconds)."""
        self._caller = asyncio.get_running_loop()
        self._to_caller = Mailbox(self._caller)
        self._ended = self._caller.create_future()
        running = threading.Event()
        # the same kind of loop as the caller's (uvloop in the daemons, asyncio's in the tests)
        factory: Callable[[], asyncio.AbstractEventLoop] = type(self._caller)
        self._thread = threading.Thread(
            target=self._main, args=(running, factory), name=self.name, daemon=True
        )
        self._thread.start()
        if not running.wait(10.0):
            raise RuntimeError(f"the ZooKeeper I/O thread {self.name} did not start")

    def _main(self, running: threading.Event, factory: Callable[[], asyncio.AbstractEventLoop]) -> None:
        try:
            loop = factory()
        except Exception:
            loop = asyncio.new_event_loop()
        self.loop = loop
        self._to_io = Mailbox(loop)
        loop.call_soon(running.set)
        try:
            loop.run_forever()
            # like asyncio.run: cancel what is left and let it finish (bounded: the tasks react
            # to cancellation at once)
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.wait(tasks, timeout=_STOP_TIMEOUT_S))
            for task in tasks:
                if task.done() and not task.cancelled() and task.exception() is not None:
                    log.debug("ZooKeeper I/O task %s ended with %r", task.get_name(), task.exception())
            loop.run_until_complete(loop.shutdown_asyncgens())
        except Exception:
            log.exception("the ZooKeeper I/O loop failed")
        finally:
            loop.close()
            ended = self._ended
            if ended is not None:
                self.deliver(_settle_none, ended)

    # --- the two directions ------------------------------------------------------------------------

    def submit(self, coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        """Run ``coro`` on the I/O loop; its outcome as a future of the caller's (running) loop."""
        caller = asyncio.get_running_loop()
        to_caller = self._to_caller if caller is self._caller else Mailbox(caller)
        assert to_caller is not None
        result: asyncio.Future[T] = caller.create_future()
        handle: list[asyncio.Task[T]] = []

        def begin() -> None:
            if result.done():  # cancelled before it started
                coro.close()
                return
            task = asyncio.get_running_loop().create_task(coro)
            handle.append(task)
            task.add_done_callback(lambda done: _hand_back(to_caller, result, done))

        def cancel_task() -> None:  # on the I/O loop, after begin() (FIFO)
            if handle:
                handle[0].cancel()

        def cancelled(future: asyncio.Future[T]) -> None:
            if future.cancelled():
                with contextlib.suppress(RuntimeError):  # the I/O loop is closed: nothing runs
                    self._mailbox().post(cancel_task)

        with self._lock:
            if self._closed or self._to_io is None:
                coro.close()
                raise IoClosed("the ZooKeeper client is closed")
            self._to_io.post(begin)
        result.add_done_callback(cancelled)
        return result

    def post(self, callback: Callable[..., object], *args: object) -> None:
        """Run ``callback(*args)`` on the I/O loop (FIFO with ``submit``). Raises IoClosed once
        stopped."""
        with self._lock:
            if self._closed or self._to_io is None:
                raise IoClosed("the ZooKeeper client is closed")
            self._to_io.post(callback, *args)

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        """Schedule ``callback(*args)`` on the caller's loop (dropped if that loop is closed)."""
        mailbox = self._to_caller
        if mailbox is None:
            return
        with contextlib.suppress(RuntimeError):  # the caller's loop is closed
            mailbox.post(callback, *args)

    # --- stopping ---------------------------------------------------------------------------------

    async def stop(self) -> None:
        """Stop the I/O loop (its tasks are cancelled and awaited there, bounded), wait for the
        thread to end without blocking the caller's loop, join it. Idempotent; never hangs."""
        with self._lock:
            already, self._closed = self._closed, True
        loop, thread, ended = self.loop, self._thread, self._ended
        if thread is None or loop is None or ended is None:
            return
        if not already:
            with contextlib.suppress(RuntimeError):  # after every hand-over already posted
                self._mailbox().post(loop.stop)
        if ended.get_loop() is asyncio.get_running_loop():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_STOP_TIMEOUT_S + 1.0):
                    await asyncio.shield(ended)
        thread.join(timeout=0.5)  # it has ended, or is about to: the loop is closed
        if thread.is_alive():
            log.warning("the ZooKeeper I/O thread %s did not end", self.name)

    def _mailbox(self) -> Mailbox:
        assert self._to_io is not None
        return self._to_io


def _hand_back(to_caller: Mailbox, result: asyncio.Future[T], task: asyncio.Task[T]) -> None:
    """On the I/O loop: pass the task's outcome to the caller's loop (FIFO with deliver)."""
    with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nobody waits
        to_caller.post(_settle, result, task)


def _settle(result: asyncio.Future[T], task: asyncio.Task[T]) -> None:
    if result.done():
        if not task.cancelled():
            task.exception()  # retrieved: the caller gave up on it
        return
    if task.cancelled():  # not by the caller (its result would be done): the I/O loop stopped
        result.set_exception(IoClosed("the ZooKeeper client is closed"))
        return
    error = task.exception()
    if error is not None:
        result.set_exception(error)
    else:
        result.set_result(task.result())


def _settle_none(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
