"""What every part of one controller instance uses, active or standby: the settings, the ZooKeeper
read port (``reads``: the composition hands the client; its session, election and fenced sends
stay with the term), metrics, the event queue, the control channel, the event log, watch arming
and problem reports. The domain parts (brokers, topics, quotas, ...) receive this object instead
of inheriting from a common base.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from reassignd.contracts.records import ProblemReported
from reassignd.control.protocol import ControlRequest
from reassignd.controller.instance.event_queue import ControllerEventQueue
from reassignd.controller.instance.events import ControllerEvent, event_name
from reassignd.controller.instance.metrics import ControllerMetrics
from reassignd.controller.model.snapshot import Problem
from reassignd.controller.settings import ControllerSettings
from reassignd.stream.record_log import RecordLog
from reassignd.zk import codec, paths
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import WatchCallback

log = logging.getLogger(__name__)

MAX_PROBLEMS = 100
# (path -> reason) pairs remembered so a re-read is not a new problem: the oldest forgotten first
# (one then reported again is one more line, not unbounded memory)
MAX_REPORTED = 10_000


class BrokerChannel(Protocol):
    """What the parts ask of the control channel (``ControlChannel``; a test's recording fake):
    a broker's queue opened and closed, a request queued."""

    def add_broker(self, broker_id: int, url: str) -> None: ...

    async def remove_broker(self, broker_id: int) -> None: ...

    def send(self, broker_id: int, request: ControlRequest) -> None: ...


class Shared:
    """One controller instance's services (they outlive every active term)."""

    def __init__(
        self,
        settings: ControllerSettings,
        reads: ZkReads,
        metrics: ControllerMetrics,
        clock: Callable[[], float],
        queue: ControllerEventQueue[ControllerEvent],
        channel: BrokerChannel,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.reads = reads  # every ZooKeeper read of the parts (their writes: the fenced gateway)
        self.metrics = metrics
        self.clock = clock
        self.queue = queue
        self.channel = channel
        # the wall clock (seconds since the epoch) of every timestamp the parts write or report;
        # ``clock`` (monotonic) times durations
        self.wall_clock = wall_clock
        # what this instance decided, as event records (GET /v1/events, the Kafka stream)
        # (its records' times on the injected wall clock, as every other timestamp)
        self.records = RecordLog(clock_ms=self.wall_ms)
        self.problems: collections.deque[Problem] = collections.deque(maxlen=MAX_PROBLEMS)
        # path -> reason, so a re-read is not a new problem (bounded: MAX_REPORTED, oldest out)
        self._reported: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._armed: dict[tuple[str, str], WatchCallback] = {}

    def wall_ms(self) -> int:
        """Now, in milliseconds since the epoch, on the injected wall clock."""
        return int(self.wall_clock() * 1000)

    def watch(self, path: str, event: ControllerEvent) -> WatchCallback | None:
        """A one-shot callback enqueuing ``event``, or None when one is armed on ``path`` already.

        "Armed" is what the ZooKeeper client says: a callback whose read failed, found no znode
        (data and children reads) or was dropped at a resignation no longer counts, so the next
        read arms a fresh one instead of leaving the path unwatched."""
        key = (event_name(event), path)
        previous = self._armed.get(key)
        if previous is not None and self.reads.watching(previous):
            return None

        def fire(_: str) -> None:
            if self._armed.get(key) is fire:
                del self._armed[key]
            self.queue.put(event)

        self._armed[key] = fire
        return fire

    def forget_watches(self) -> None:
        """The session's watches are gone (it expired, or the term dropped them resigning): the
        next reads arm new ones."""
        self._armed.clear()

    def report(self, path: str, reason: str, kind: str) -> None:
        """A znode that cannot be used: logged, counted, listed in the snapshot's problems and
        recorded as an event, once per (path, reason)."""
        if self._new_problem(path, reason, kind):
            log.error("malformed znode %s skipped: %s", path, reason)
            self.metrics.decode_errors.labels(kind).inc()

    def refuse(self, path: str, reason: str, kind: str) -> None:
        """An input refused because it fails the same way every time (a deterministic failure):
        counted each time, and logged, listed in the problems and recorded as an event once per
        (path, reason). ``path`` is the znode (or the request) it concerns."""
        self.metrics.refused_inputs.labels(kind).inc()
        if self._new_problem(path, reason, kind):
            log.warning("refused %s: %s", path, reason)

    def _new_problem(self, path: str, reason: str, kind: str) -> bool:
        if self._reported.get(path) == reason:
            log.debug("%s still refused or skipped: %s", path, reason)
            return False
        self._reported[path] = reason
        self._reported.move_to_end(path)
        while len(self._reported) > MAX_REPORTED:
            self._reported.popitem(last=False)
        self.problems.appendleft(Problem(path, reason, self.wall_ms()))
        self.records.emit(ProblemReported(path=path, reason=reason, kind=kind))
        return True

    def decode_controller(self, data: bytes | None) -> codec.ControllerInfo | None:
        try:
            return codec.decode_controller(data)
        except codec.CodecError as e:
            self.report(paths.CONTROLLER, e.reason, "controller")
            return None

    def deliver(self, outgoing: Iterable[Mapping[int, Sequence[ControlRequest]]]) -> None:
        """An event's sealed control requests, batch after batch, to each broker's queue: only
        the applier (``runtime.apply``) calls it, at the event's end."""
        for built in outgoing:
            for broker_id, requests in built.items():
                for request in requests:
                    self.channel.send(broker_id, request)
