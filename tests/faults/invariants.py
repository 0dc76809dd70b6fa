"""What must hold once the faults are over, read from ZooKeeper, the agents and the controllers.

``check(...)`` returns a list of violations: strings (so a test asserts ``== []`` and pytest
shows every one of them), each with a ``kind`` the benchmark counts by:

- ``assignment``: a partition not at its expected replicas, AR/RR left in a topic znode, a move
  still listed by ``GET /v1/reassignments``, ``/admin/reassign_partitions`` still present (a lost or
  half-done reassignment);
- ``offline``: no state znode, leader -1, leader not live or not in the ISR, ISR outside the
  replicas;
- ``stray``: an agent hosts a replica it is not assigned; ``missing``: an agent lacks one it is;
- ``agent``: an expected broker is not registered, or its agent does not answer;
- ``controller``: no controller instance is active;
- ``scenario``: (from the scenarios) an expectation of the scenario itself failed;
- ``storm``: (from the poison scenarios) the controller epoch moved more than once after an input
  that fails the same way every time.

``OfflineSampler`` polls the state znodes in the background and records every partition seen
offline (leader -1 or not live) while some replica of it was in the ISR and live.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import aiohttp

from reassignd.topic_partition import TopicPartition
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.codec import CodecError
from reassignd.zk.errors import ZkError
from reassignd.zk.values import ZkSettings
from tests.integration.harness import http_get

Assignment = Mapping[TopicPartition, Sequence[int]]

KINDS = ("assignment", "offline", "stray", "missing", "agent", "controller", "scenario", "storm")


class Violation(str):
    """A violation: a string ``"<kind>: <what>"`` with its ``kind`` and the ``partitions`` it is
    about apart (for counting)."""

    kind: str
    partitions: tuple[TopicPartition, ...]

    def __new__(cls, kind: str, message: str, partitions: Iterable[TopicPartition] = ()) -> Violation:
        v = super().__new__(cls, f"{kind}: {message}")
        v.kind = kind
        v.partitions = tuple(partitions)
        return v


def partitions_of(violations: Iterable[str], kind: str) -> set[TopicPartition]:
    """The distinct partitions the violations of ``kind`` are about."""
    return {tp for v in violations if isinstance(v, Violation) and v.kind == kind for tp in v.partitions}


def replicas_of(violations: Iterable[str], kind: str) -> int:
    """How many (broker, partition) replicas the violations of ``kind`` (stray, missing) name."""
    return sum(len(v.partitions) for v in violations if isinstance(v, Violation) and v.kind == kind)


def counts(violations: Iterable[str]) -> dict[str, int]:
    """Violations per kind (every kind present, zero or not)."""
    result = dict.fromkeys(KINDS, 0)
    for v in violations:
        kind = v.kind if isinstance(v, Violation) else "assignment"
        result[kind] = result.get(kind, 0) + 1
    return result


# --- reading the cluster -------------------------------------------------------------------------


def control_url(endpoints: Iterable[str]) -> str | None:
    """``http://host:port`` of a ``CONTROL://host:port`` endpoint."""
    for e in endpoints:
        if e.startswith("CONTROL://"):
            return "http://" + e.removeprefix("CONTROL://")
    return None


def agents_from_brokers(brokers: Iterable[Mapping[str, object]]) -> dict[int, str]:
    """Broker id -> control URL, from the ``brokers`` of ``GET /v1/brokers``."""
    result: dict[int, str] = {}
    for b in brokers:
        endpoints = b.get("endpoints")
        broker_id = b.get("id")
        if isinstance(broker_id, int) and isinstance(endpoints, list):
            url = control_url(str(e) for e in endpoints)
            if url is not None:
                result[broker_id] = url
    return result


async def live_agents(zk: ZkClient) -> dict[int, str]:
    """Broker id -> control URL of every registered broker, from ``/brokers/ids``."""
    ids = [int(c) for c in await zk.children(paths.BROKER_IDS) if c.isdigit()]
    znodes = await zk.get_many([paths.broker(i) for i in ids])
    result: dict[int, str] = {}
    for broker_id, znode in zip(ids, znodes, strict=True):
        if znode is None:
            continue
        try:
            reg = codec.decode_broker(broker_id, znode.data)
        except CodecError:
            continue
        for e in reg.endpoints:
            if e.listener == "CONTROL":
                result[broker_id] = f"http://{e.host}:{e.port}"
    return result


async def hosted_by(url: str, timeout_s: float = 5.0) -> set[TopicPartition]:
    code, body = await http_get(url + "/replicas", timeout_s=timeout_s)
    if code != 200:
        raise RuntimeError(f"GET {url}/replicas answered {code}")
    return {(r["topic"], r["partition"]) for r in body["replicas"]}


async def read_topics(zk: ZkClient) -> dict[str, codec.TopicZnode]:
    names = await zk.children(paths.BROKER_TOPICS)
    znodes = await zk.get_many([paths.topic(t) for t in names])
    result: dict[str, codec.TopicZnode] = {}
    for name, znode in zip(names, znodes, strict=True):
        if znode is not None:
            with contextlib.suppress(CodecError):
                result[name] = codec.decode_topic(znode.data)
    return result


async def read_states(
    zk: ZkClient, tps: Sequence[TopicPartition]
) -> dict[TopicPartition, codec.PartitionState | None]:
    znodes = await zk.get_many([paths.partition_state(t, p) for t, p in tps])
    result: dict[TopicPartition, codec.PartitionState | None] = {}
    for tp, znode in zip(tps, znodes, strict=True):
        state = None
        if znode is not None:
            with contextlib.suppress(CodecError):
                state = codec.decode_partition_state(znode.data)
        result[tp] = state
    return result


async def active_controller(controllers: Sequence[str], token: str | None = None) -> str | None:
    """The base URL of the instance that says it is active, if any."""
    for url in controllers:
        try:
            code, body = await http_get(url + "/v1/status", timeout_s=3.0, token=token)
        except (aiohttp.ClientError, OSError, TimeoutError):
            continue
        if code == 200 and body.get("active"):
            return url
    return None


# --- the check -----------------------------------------------------------------------------------


def _tp(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


async def check(  # noqa: PLR0912 (one branch per invariant, each reported)
    zk: ZkClient,
    expected: Assignment,
    controllers: Sequence[str],
    agents: Mapping[int, str] | None = None,
    *,
    expected_live: Iterable[int] | None = None,
    token: str | None = None,
) -> list[str]:
    """Every invariant at once; ``[]`` when all hold.

    ``expected``: the final replicas (in order) of every partition of the topics it names (a
    partition of such a topic that it does not name is a violation too). ``agents``: broker id ->
    control URL (default: every registered broker). ``expected_live``: brokers that must be
    registered (default: every broker of ``expected``). ``token``: the bearer token of the
    controllers' API (when they have a tokens file)."""
    violations: list[str] = []
    topics = await read_topics(zk)
    live = {int(c) for c in await zk.children(paths.BROKER_IDS) if c.isdigit()}

    # topic znodes: replicas as expected, no AR/RR anywhere
    by_topic: dict[str, dict[int, tuple[int, ...]]] = {}
    for (t, p), replicas in expected.items():
        by_topic.setdefault(t, {})[p] = tuple(replicas)
    for t, want in sorted(by_topic.items()):
        znode = topics.get(t)
        if znode is None:
            violations.append(Violation("assignment", f"topic {t} has no (readable) topic znode"))
            continue
        for p in sorted(set(znode.partitions) - set(want)):
            violations.append(Violation("assignment", f"{t}-{p} exists but is not expected", [(t, p)]))
        for p, replicas in sorted(want.items()):
            got = znode.partitions.get(p)
            if got is None:
                violations.append(Violation("assignment", f"{t}-{p} missing from the topic znode", [(t, p)]))
            elif got != replicas:
                violations.append(
                    Violation(
                        "assignment", f"{t}-{p} replicas {list(got)}, expected {list(replicas)}", [(t, p)]
                    )
                )
    for t, znode in sorted(topics.items()):
        for p in sorted(set(znode.adding) | set(znode.removing)):
            violations.append(
                Violation(
                    "assignment",
                    f"{t}-{p} left reassigning: adding {list(znode.adding.get(p, ()))}, "
                    f"removing {list(znode.removing.get(p, ()))}",
                    [(t, p)],
                )
            )

    # partition states: leader live and in the ISR, ISR within the replicas
    tps = sorted((t, p) for t, z in topics.items() if t in by_topic for p in z.partitions)
    states = await read_states(zk, tps)
    for tp in tps:
        state = states[tp]
        replicas = topics[tp[0]].partitions[tp[1]]
        if state is None:
            violations.append(Violation("offline", f"{_tp(tp)} has no (readable) state znode", [tp]))
            continue
        if state.leader == -1:
            violations.append(Violation("offline", f"{_tp(tp)} has no leader (ISR {list(state.isr)})", [tp]))
        elif state.leader not in live:
            violations.append(Violation("offline", f"{_tp(tp)} leader {state.leader} is not live", [tp]))
        elif state.leader not in state.isr:
            violations.append(
                Violation("offline", f"{_tp(tp)} leader {state.leader} not in ISR {list(state.isr)}", [tp])
            )
        if not set(state.isr) <= set(replicas):
            violations.append(
                Violation(
                    "offline", f"{_tp(tp)} ISR {list(state.isr)} outside replicas {list(replicas)}", [tp]
                )
            )

    # brokers expected live
    must_live = set(expected_live) if expected_live is not None else {b for r in expected.values() for b in r}
    for b in sorted(must_live - live):
        violations.append(Violation("agent", f"broker {b} is not registered"))

    # agents host exactly what they are assigned (over every topic in ZooKeeper)
    if agents is None:
        agents = await live_agents(zk)
    for broker_id, url in sorted(agents.items()):
        assigned = {(t, p) for t, z in topics.items() for p, rs in z.partitions.items() if broker_id in rs}
        try:
            hosted = await hosted_by(url)
        except (aiohttp.ClientError, OSError, TimeoutError, RuntimeError) as e:
            violations.append(Violation("agent", f"broker {broker_id} at {url} does not answer: {e!r}"))
            continue
        strays = sorted(hosted - assigned)
        missing = sorted(assigned - hosted)
        if strays:
            violations.append(
                Violation(
                    "stray", f"broker {broker_id} hosts {len(strays)} stray replicas: {_few(strays)}", strays
                )
            )
        if missing:
            violations.append(
                Violation(
                    "missing", f"broker {broker_id} lacks {len(missing)} replicas: {_few(missing)}", missing
                )
            )

    # the controllers: one active, nothing listed as moving
    active = await active_controller(controllers, token)
    if active is None:
        violations.append(Violation("controller", f"no active controller among {list(controllers)}"))
    else:
        try:
            code, body = await http_get(active + "/v1/reassignments", timeout_s=10.0, token=token)
        except (aiohttp.ClientError, OSError, TimeoutError) as e:
            violations.append(Violation("controller", f"GET {active}/v1/reassignments failed: {e!r}"))
        else:
            if code != 200:
                violations.append(Violation("controller", f"GET {active}/v1/reassignments answered {code}"))
            else:
                moving = sorted((t["name"], p["partition"]) for t in body["topics"] for p in t["partitions"])
                if moving:
                    violations.append(
                        Violation(
                            "assignment", f"{len(moving)} listed as reassigning: {_few(moving)}", moving
                        )
                    )

    if await zk.exists(paths.REASSIGN_PARTITIONS) is not None:
        violations.append(Violation("assignment", "/admin/reassign_partitions still exists"))
    return violations


def _few(tps: Sequence[TopicPartition], n: int = 8) -> str:
    shown = ", ".join(_tp(tp) for tp in tps[:n])
    return shown + (f" (+{len(tps) - n} more)" if len(tps) > n else "")


async def settle(
    probe: Callable[[], Awaitable[list[str]]], timeout_s: float = 60.0, interval_s: float = 0.5
) -> list[str]:
    """Run ``probe`` until it finds no violation or ``timeout_s`` passed; the last violations.
    (A bound for convergence after the faults, not a speed assertion.)"""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            last = await probe()
        except (ZkError, aiohttp.ClientError, OSError, TimeoutError) as e:
            last = [Violation("controller", f"checking failed: {e!r}")]
        if not last or time.monotonic() >= deadline:
            return last
        await asyncio.sleep(interval_s)


# --- the offline sampler -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OfflineSample:
    at: float  # seconds since the sampler started
    topic: str
    partition: int
    leader: int
    isr: tuple[int, ...]
    live: tuple[int, ...]

    def __str__(self) -> str:
        return (
            f"{self.topic}-{self.partition} at {self.at:.1f}s: leader {self.leader}, "
            f"ISR {list(self.isr)}, live {list(self.live)}"
        )


class OfflineSampler:
    """Polls the partition state znodes of ``topics`` (every topic when None) and the live brokers
    every ``interval_s`` on a session of its own, and records each partition seen with leader -1
    or a leader that is not live while a live broker is in its ISR.

    Bounded: at most ``max_records`` samples kept (``samples_offline`` counts them all), sampling
    stops by itself after ``max_duration_s``; ``stop()`` cancels it and closes its session."""

    def __init__(
        self,
        zk_connect: str,
        topics: Iterable[str] | None = None,
        *,
        interval_s: float = 0.1,
        max_records: int = 10_000,
        max_duration_s: float = 600.0,
    ) -> None:
        self.zk = ZkClient(ZkSettings(zk_connect, session_timeout_s=5.0, request_timeout_s=3.0))
        self.topics = None if topics is None else sorted(set(topics))
        self.interval_s = interval_s
        self.max_records = max_records
        self.max_duration_s = max_duration_s
        self.records: list[OfflineSample] = []
        self.rounds = 0  # completed sampling rounds
        self.failed_rounds = 0  # rounds ZooKeeper did not answer
        self.samples_offline = 0
        self._open: dict[TopicPartition, float] = {}  # offline since
        self._last_seen: dict[TopicPartition, float] = {}
        self.episodes: list[tuple[TopicPartition, float, float]] = []  # tp, start, duration
        self._task: asyncio.Task[None] | None = None
        self._t0 = time.monotonic()

    async def start(self) -> OfflineSampler:
        await self.zk.start()
        self._t0 = time.monotonic()
        self._task = asyncio.create_task(self._run(), name="offline-sampler")
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        now = time.monotonic() - self._t0
        for tp, since in self._open.items():
            self.episodes.append((tp, since, self._last_seen.get(tp, now) - since))
        self._open.clear()
        await self.zk.close()

    async def __aenter__(self) -> OfflineSampler:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def offline(self, longer_than_s: float = 0.0) -> list[str]:
        """The offline episodes (a partition seen offline in consecutive rounds) that lasted more
        than ``longer_than_s``, as strings. Call after ``stop()`` to include open episodes."""
        return [
            f"{_tp(tp)} offline for {duration:.1f}s from {start:.1f}s"
            for tp, start, duration in self.episodes
            if duration > longer_than_s
        ]

    async def _run(self) -> None:
        deadline = self._t0 + self.max_duration_s
        while time.monotonic() < deadline:
            started = time.monotonic()
            try:
                await self._sample(started - self._t0)
                self.rounds += 1
            except (ZkError, TimeoutError):
                self.failed_rounds += 1
            await asyncio.sleep(max(0.0, self.interval_s - (time.monotonic() - started)))

    async def _sample(self, at: float) -> None:
        live = {int(c) for c in await self.zk.children(paths.BROKER_IDS) if c.isdigit()}
        names = (
            self.topics if self.topics is not None else sorted(await self.zk.children(paths.BROKER_TOPICS))
        )
        topic_znodes = await self.zk.get_many([paths.topic(t) for t in names])
        tps: list[TopicPartition] = []
        for t, znode in zip(names, topic_znodes, strict=True):
            if znode is None:
                continue
            with contextlib.suppress(CodecError):
                tps.extend((t, p) for p in sorted(codec.decode_topic(znode.data).partitions))
        states = await read_states(self.zk, tps)
        offline_now: set[TopicPartition] = set()
        for tp, state in states.items():
            if state is None:
                continue
            leader_ok = state.leader != -1 and state.leader in live
            if leader_ok or not set(state.isr) & live:
                continue
            offline_now.add(tp)
            self.samples_offline += 1
            if len(self.records) < self.max_records:
                self.records.append(
                    OfflineSample(at, tp[0], tp[1], state.leader, state.isr, tuple(sorted(live)))
                )
        for tp in offline_now:
            self._open.setdefault(tp, at)
            self._last_seen[tp] = at
        for tp in list(self._open):
            if tp not in offline_now:
                since = self._open.pop(tp)
                self.episodes.append((tp, since, at - since))
