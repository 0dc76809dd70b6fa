"""The fault scenarios, as plain async functions shared by the tests and ``bench/faults.py``.

Each takes an ``Env`` (processes, a ZooKeeper session on the scenario's chroot, and the server
when the scenario freezes or restarts it) and a seed, injects its faults at seeded points, waits
for the cluster to settle, and returns an ``Outcome``: the invariant violations
(``invariants.check``), the offline episodes the sampler saw that outlasted ``GRACE_S``, and notes
on what was done. A scenario-specific expectation that fails ("no controller became active
again") is a violation of kind ``scenario``.

Timeouts below bound hangs; nothing asserts speed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aiohttp

from reassignd.controller.settings import ControllerSettings
from reassignd.testing.polling import eventually
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import ZkError
from reassignd.zk.server import LocalZooKeeper
from tests.faults import invariants, proxy
from tests.faults.invariants import Assignment, OfflineSampler, Violation
from tests.integration.harness import ControllerProc, Proc, Procs, http_get

T = TypeVar("T")

SESSION_TIMEOUT_S = 2.0
# the controller's ZooKeeper request timeout (not a flag: its settings' default)
ZK_REQUEST_TIMEOUT_S = ControllerSettings(zk_connect="").zk_request_timeout_s
# An offline episode shorter than this is the time a correct controller needs to notice a fault
# and act (a session timeout, an election, a failover load); longer ones are reported.
GRACE_S = 5.0
SETTLE_S = 90.0  # bound for convergence once the faults are over

FAST = "1000000000"
SLOW = "2000"
RATE = "reassignd.sim.replication.bytes.per.s"
INITIAL = "reassignd.sim.initial.bytes"
UNCLEAN = "unclean.leader.election.enable"


@dataclass
class Env:
    procs: Procs
    zk: ZkClient
    zk_connect: str  # host:port/chroot, the one the processes use
    server: LocalZooKeeper | None = None  # set when the scenario may freeze or restart it

    @property
    def chroot(self) -> str:
        _, _, chroot = self.zk_connect.partition("/")
        return "/" + chroot if chroot else ""

    @property
    def zk_port(self) -> int:
        host_port = self.zk_connect.split("/", 1)[0].split(",")[0]
        return int(host_port.rsplit(":", 1)[1])


@dataclass
class Outcome:
    kind: str
    seed: int
    violations: list[str] = field(default_factory=list)
    offline: list[str] = field(default_factory=list)  # episodes longer than GRACE_S
    offline_samples: int = 0  # every offline sample, however short its episode
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return invariants.counts(self.violations)


# --- small helpers -------------------------------------------------------------------------------


async def retry_zk(action: Callable[[], Awaitable[T]], timeout_s: float = 30.0) -> T:
    """Run a ZooKeeper action again while ZooKeeper is away (a test's own writes)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return await action()
        except (ZkError, TimeoutError):
            if time.monotonic() >= deadline:
                raise
            await asyncio.sleep(0.2)


async def put_config(zk: ZkClient, path: str, config: Mapping[str, str]) -> None:
    """Create or overwrite an entity config znode (merging into what is there)."""
    data_now = await zk.get_or_none(path)
    if data_now is None:
        await zk.create(path, admin_codec.encode_entity_config(dict(config)), make_parents=True)
        return
    merged = dict(admin_codec.decode_entity_config(data_now.data))
    merged.update(config)
    await zk.set(path, admin_codec.encode_entity_config(merged), data_now.stat.version)


async def set_rate(zk: ZkClient, broker: int | None, rate: str) -> None:
    await retry_zk(lambda: put_config(zk, paths.config_broker(broker), {RATE: rate}))


async def make_topic(
    zk: ZkClient,
    name: str,
    assignment: Mapping[int, Sequence[int]],
    *,
    initial_bytes: int = 0,
    config: Mapping[str, str] | None = None,
) -> None:
    """Create a topic as Kafka's tools did: its config znode, then its topic znode, the parents
    created where missing (KafkaZkClient.createRecursive: the controller may not have made
    ``/brokers/topics`` yet)."""
    cfg = dict(config or {})
    if initial_bytes:
        cfg[INITIAL] = str(initial_bytes)
    if cfg:
        await put_config(zk, paths.config_topic(name), cfg)
    znode = codec.TopicZnode({p: tuple(rs) for p, rs in assignment.items()})
    await zk.create(paths.topic(name), codec.encode_topic(znode), make_parents=True)


async def online(zk: ZkClient, tps: Sequence[TopicPartition]) -> bool:
    """Every partition has a state znode with a live leader."""
    live = {int(c) for c in await zk.children(paths.BROKER_IDS) if c.isdigit()}
    states = await invariants.read_states(zk, tps)
    return all(s is not None and s.leader in live for s in states.values())


async def wait_online(zk: ZkClient, tps: Sequence[TopicPartition], timeout_s: float = 60.0) -> bool:
    return bool(await eventually(lambda: online(zk, tps), timeout_s, 0.2, or_none=True))


async def wait_brokers(zk: ZkClient, ids: set[int], timeout_s: float = 30.0) -> bool:
    async def probe() -> bool:
        live = {int(c) for c in await zk.children(paths.BROKER_IDS) if c.isdigit()}
        return ids <= live

    return bool(await eventually(probe, timeout_s, 0.2, or_none=True))


async def hosts(zk: ZkClient, broker: int, tp: TopicPartition) -> bool:
    url = (await invariants.live_agents(zk)).get(broker)
    return url is not None and tp in await invariants.hosted_by(url)


def tps_of(assignment: Mapping[TopicPartition, Sequence[int]]) -> list[TopicPartition]:
    return sorted(assignment)


class Controllers:
    """Controller instances of one scenario: started, killed and restarted by id."""

    def __init__(self, env: Env, *flags: str, token: str | None = None) -> None:
        self.env = env
        self.flags = flags  # extra command-line flags of every instance
        self.token = token  # the bearer token of their API (flags naming a tokens file)
        self.by_id: dict[int, ControllerProc] = {}
        self.connect: dict[int, str] = {}

    def start(self, controller_id: int, zk_connect: str | None = None, *extra: str) -> ControllerProc:
        """Instance ``controller_id`` with the common flags and its own ``extra`` ones."""
        connect = zk_connect or self.env.zk_connect
        c = self.env.procs.controller_via(connect, controller_id, SESSION_TIMEOUT_S, *self.flags, *extra)
        c.token = self.token
        self.by_id[controller_id] = c
        self.connect[controller_id] = connect
        return c

    @property
    def urls(self) -> list[str]:
        return [c.url for c in self.by_id.values()]

    async def active(self) -> ControllerProc | None:
        for c in self.by_id.values():
            if not c.proc.alive:
                continue
            s = await c.status()
            if s and s["active"]:
                return c
        return None

    async def wait_active(self, timeout_s: float = 30.0, ready: bool = False) -> ControllerProc | None:
        async def probe() -> ControllerProc | None:
            c = await self.active()
            if c is None:
                return None
            if ready:
                code, _ = await http_get(c.url + "/readyz")
                if code != 200:
                    return None
            return c

        return await eventually(probe, timeout_s, 0.2, or_none=True)

    def kill(self, controller_id: int) -> None:
        self.by_id[controller_id].proc.kill()

    def restart(self, controller_id: int) -> ControllerProc:
        c = self.env.procs.restart_controller(self.by_id[controller_id])
        self.by_id[controller_id] = c
        return c

    async def alter(
        self,
        targets: Mapping[TopicPartition, Sequence[int] | None],
        timeout_s: float = 60.0,
        *,
        retry: bool = True,
    ) -> bool:
        """POST the reassignments to the active controller; with ``retry``, again (to whichever
        is active then) while the answer is NOT_CONTROLLER or the request fails, as a client does.
        True once every partition was accepted."""
        topics: dict[str, list[dict[str, Any]]] = {}
        for (t, p), replicas in sorted(targets.items()):
            topics.setdefault(t, []).append(
                {"partition": p, "replicas": None if replicas is None else list(replicas)}
            )
        body = {"topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}

        async def attempt() -> bool:
            c = await self.active()
            if c is None:
                return False
            code, resp = await c.post("/v1/reassignments", body)
            if code != 200 or resp.get("error_code") != 0:
                return False
            return all(p["error_code"] == 0 for t in resp["responses"] for p in t["partitions"])

        if not retry:
            try:
                return await attempt()
            except (aiohttp.ClientError, OSError, TimeoutError):
                return False
        return bool(await eventually(attempt, timeout_s, 0.5, or_none=True))

    def logs(self) -> dict[int, str]:
        return {i: c.proc.log() for i, c in self.by_id.items()}


async def finish(
    env: Env,
    outcome: Outcome,
    expected: Assignment,
    controllers: Controllers,
    sampler: OfflineSampler | None,
    *,
    expected_live: set[int] | None = None,
    settle_s: float = SETTLE_S,
) -> Outcome:
    """Let the moves finish fast, wait for the invariants (bounded), stop the sampler."""
    with contextlib.suppress(ZkError, TimeoutError):
        await set_rate(env.zk, None, FAST)

    async def probe() -> list[str]:
        return await invariants.check(
            env.zk, expected, controllers.urls, expected_live=expected_live, token=controllers.token
        )

    outcome.violations.extend(await invariants.settle(probe, settle_s))
    active = await controllers.active()
    outcome.notes.append(f"active at the end: {None if active is None else active.controller_id}")
    if sampler is not None:
        await sampler.stop()
        outcome.offline.extend(sampler.offline(GRACE_S))
        outcome.offline_samples = sampler.samples_offline
        longest = max((d for _, _, d in sampler.episodes), default=0.0)
        outcome.notes.append(
            f"sampler: {sampler.rounds} rounds, {sampler.samples_offline} offline samples, "
            f"longest offline episode {longest:.1f}s"
        )
    return outcome


def _moves(
    rng: random.Random, partitions: int, sources: Sequence[int], targets: Sequence[int], rf: int
) -> tuple[dict[TopicPartition, tuple[int, ...]], dict[TopicPartition, tuple[int, ...]]]:
    """Original and target replicas of ``partitions`` partitions of topic ``t``: originals on
    ``sources`` (rotating), targets with at least one replica of ``targets``."""
    before: dict[TopicPartition, tuple[int, ...]] = {}
    after: dict[TopicPartition, tuple[int, ...]] = {}
    everyone = sorted(set(sources) | set(targets))
    for p in range(partitions):
        start = p % len(sources)
        before[("t", p)] = tuple(sources[(start + i) % len(sources)] for i in range(rf))
        new = rng.choice(list(targets))
        rest = rng.sample([b for b in everyone if b != new], rf - 1)
        chosen = [new, *rest]
        rng.shuffle(chosen)
        after[("t", p)] = tuple(chosen)
    return before, after


def _renamed(
    a: Mapping[TopicPartition, tuple[int, ...]], topic: str
) -> dict[TopicPartition, tuple[int, ...]]:
    return {(topic, p): rs for (_, p), rs in a.items()}


def _by_partition(a: Mapping[TopicPartition, tuple[int, ...]]) -> dict[int, tuple[int, ...]]:
    return {p: rs for (_, p), rs in a.items()}


# --- a. ZooKeeper frozen past every timeout -------------------------------------------------------


async def zookeeper_freeze(env: Env, seed: int) -> Outcome:
    """Two controllers and three brokers; ZooKeeper frozen longer than session timeout + request
    timeout, then thawed: some instance is active (and ready) again, and a topic created
    afterwards comes online."""
    assert env.server is not None, "needs a ZooKeeper server of its own"
    rng = random.Random(seed)
    out = Outcome("zookeeper_freeze", seed)
    controllers = Controllers(env)
    controllers.start(9000)
    controllers.start(9001)
    env.procs.cluster(3, 1, 3)
    if await controllers.wait_active() is None or not await wait_brokers(env.zk, {1, 2, 3}):
        out.violations.append(Violation("scenario", "no active controller and brokers before the fault"))
        return out
    before = {("before", p): (1 + p % 3, 1 + (p + 1) % 3) for p in range(3)}
    await make_topic(env.zk, "before", _by_partition(before))
    await wait_online(env.zk, tps_of(before))

    frozen_s = SESSION_TIMEOUT_S + ZK_REQUEST_TIMEOUT_S + 1.0 + rng.uniform(0.0, 2.0)
    out.notes.append(f"ZooKeeper frozen for {frozen_s:.1f}s")
    env.server.freeze()
    try:
        await asyncio.sleep(frozen_s)
    finally:
        env.server.thaw()

    active = await controllers.wait_active(timeout_s=45.0, ready=True)
    if active is None:
        out.violations.append(
            Violation("scenario", "no controller instance active and ready within 45s of the thaw")
        )
    else:
        out.notes.append(f"controller {active.controller_id} active after the thaw")
    after = {("after", p): (1 + (p + 1) % 3, 1 + p % 3) for p in range(3)}
    await retry_zk(lambda: make_topic(env.zk, "after", _by_partition(after)))
    if not await wait_online(env.zk, tps_of(after), timeout_s=30.0):
        out.violations.append(Violation("scenario", "the topic created after the thaw never came online"))
    return await finish(env, out, {**before, **after}, controllers, None, settle_s=30.0)


# --- b. SIGKILLs of the active controller during a large move ------------------------------------


async def controller_kills(env: Env, seed: int, partitions: int = 500) -> Outcome:
    """Two controller instances, six brokers; a ``partitions``-partition move from brokers 1-3
    towards 4-6, whose targets copy at different rates so that partitions complete in waves; the
    active controller SIGKILLed two or three times (the killed instance started again at once),
    each kill at a seeded time or right after a wave of completions is seen in ZooKeeper (when
    the controller that completed them may not have told the old replicas to go yet).
    Afterwards every partition is at its target and no agent keeps a stray replica."""
    rng = random.Random(seed)
    out = Outcome("controller_kills", seed)
    await set_rate(env.zk, None, FAST)
    for broker, rate in ((4, "3000000"), (5, "1200000"), (6, "500000")):
        await set_rate(env.zk, broker, rate)
    controllers = Controllers(env)
    controllers.start(9000)
    controllers.start(9001)
    env.procs.cluster(6, 1, 3)
    if await controllers.wait_active() is None or not await wait_brokers(env.zk, set(range(1, 7))):
        out.violations.append(Violation("scenario", "no active controller and brokers before the faults"))
        return out
    before, after = _moves(rng, partitions, (1, 2, 3), (4, 5, 6), 2)
    await make_topic(env.zk, "t", _by_partition(before), initial_bytes=20_000)
    if not await wait_online(env.zk, tps_of(before), timeout_s=60.0):
        out.violations.append(Violation("scenario", "the topic did not come online before the faults"))
        return out

    async def moving() -> int:
        z = codec.decode_topic((await env.zk.get(paths.topic("t"))).data)
        return len(set(z.adding) | set(z.removing))

    sampler = await OfflineSampler(env.zk_connect, ["t"], interval_s=0.2).start()
    try:
        if not await controllers.alter(after):
            out.violations.append(Violation("scenario", "the reassignment was never accepted"))
        started = time.monotonic()
        # two or three kills, each at a seeded time or right after completions; at least one of
        # the latter (when the controller that completed moves may not have told the old
        # replicas to go yet)
        timed = [rng.random() < 0.5 for _ in range(rng.choice((2, 3)))]
        if all(timed):
            timed[rng.randrange(len(timed))] = False
        for i, at_seeded_time in enumerate(timed):
            if at_seeded_time:
                await asyncio.sleep(rng.uniform(0.2, 3.0))
                how = "at a seeded time"
            else:
                # right after the next completions show in the topic znode
                left = await retry_zk(moving)

                async def completions(left: int = left) -> bool:
                    now = await moving()
                    return now < left or now == 0

                await eventually(completions, 20.0, 0.01, or_none=True)
                how = "right after completions"
            victim = await controllers.wait_active(timeout_s=30.0)
            if victim is None:
                out.violations.append(Violation("scenario", "no active controller to kill"))
                break
            controllers.kill(victim.controller_id)
            left_now = await retry_zk(moving)
            out.notes.append(
                f"kill {i + 1}: controller {victim.controller_id} {how} at "
                f"{time.monotonic() - started:.1f}s ({left_now} partitions still moving)"
            )
            controllers.restart(victim.controller_id)
    except BaseException:
        await sampler.stop()
        raise
    return await finish(env, out, after, controllers, sampler)


# --- c. /admin/reassign_cancel created while no controller runs -----------------------------------


async def cancel_while_no_controller(env: Env, seed: int) -> Outcome:
    """Slow legacy moves pending with their original_replicas recorded; the controller killed;
    /admin/reassign_cancel created; a new controller rolls the moves back to their originals."""
    rng = random.Random(seed)
    out = Outcome("cancel_while_no_controller", seed)
    await set_rate(env.zk, None, SLOW)
    controllers = Controllers(env)
    first = controllers.start(9000)
    env.procs.cluster(4, 1, 2)
    if await controllers.wait_active() is None or not await wait_brokers(env.zk, {1, 2, 3, 4}):
        out.violations.append(Violation("scenario", "no active controller and brokers before the faults"))
        return out
    originals = {("legacy", p): tuple(rng.sample([1, 2], 2)) for p in range(4)}
    await make_topic(env.zk, "legacy", _by_partition(originals), initial_bytes=5_000_000)
    await wait_online(env.zk, tps_of(originals))
    targets = {tp: tuple(rng.sample([3, 4], 1) + rng.sample(rs, 1)) for tp, rs in originals.items()}
    entries = tuple(admin_codec.LegacyReassignmentEntry(t, p, rs) for (t, p), rs in sorted(targets.items()))
    await env.zk.create(paths.REASSIGN_PARTITIONS, admin_codec.encode_legacy_reassignment(entries))

    async def recorded() -> bool:
        znode = await env.zk.get_or_none(paths.REASSIGN_PARTITIONS)
        if znode is None:
            return False
        got = admin_codec.decode_legacy_reassignment(znode.data)
        return len(got) == len(entries) and all(e.original_replicas for e in got)

    if not await eventually(recorded, 30.0, 0.2, or_none=True):
        out.violations.append(Violation("scenario", "the controller never recorded original_replicas"))
    controllers.kill(first.controller_id)
    out.notes.append("controller killed; /admin/reassign_cancel created while none runs")
    await env.zk.create(paths.REASSIGN_CANCEL, make_parents=True)
    controllers.start(9001)
    # the moves are slow: only a rollback brings them to their originals
    return await finish(env, out, originals, controllers, None, settle_s=60.0)


# --- d. a topic deleted and created again, then partitions added through its znode ----------------


async def recreate_topic(env: Env, seed: int, via: str = "api") -> Outcome:
    """A topic deleted (``via`` "api": DELETE /v1/topics/t; "znode": /admin/delete_topics/t) and
    created again under the same name, then partitions added by rewriting its topic znode:
    the new partitions come online."""
    rng = random.Random(seed)
    out = Outcome(f"recreate_topic_{via}", seed)
    controllers = Controllers(env)
    controllers.start(9000)
    env.procs.cluster(3, 1, 3)
    c = await controllers.wait_active()
    if c is None or not await wait_brokers(env.zk, {1, 2, 3}):
        out.violations.append(Violation("scenario", "no active controller and brokers"))
        return out

    def assignment(n: int) -> dict[int, list[int]]:
        return {p: rng.sample([1, 2, 3], 2) for p in range(n)}

    first = assignment(2)
    if via == "api":
        code, resp = await c.post(
            "/v1/topics", {"timeout_ms": 30000, "topics": [{"name": "again", "assignments": first}]}
        )
        out.notes.append(f"created: {code} {resp}")
    else:
        await make_topic(env.zk, "again", first)
    await wait_online(env.zk, [("again", p) for p in first])

    if via == "api":
        code, resp = await c.delete("/v1/topics/again")
        out.notes.append(f"deleted: {code} {resp}")
    else:
        await env.zk.create(paths.delete_topic("again"), make_parents=True)

    async def gone() -> bool:
        return await env.zk.exists(paths.topic("again")) is None

    if not await eventually(gone, 30.0, 0.2, or_none=True):
        out.violations.append(Violation("scenario", "the deleted topic's znode never went away"))
        return await finish(env, out, {}, controllers, None, settle_s=5.0)

    second = assignment(2)
    if via == "api":
        code, resp = await c.post(
            "/v1/topics", {"timeout_ms": 30000, "topics": [{"name": "again", "assignments": second}]}
        )
        out.notes.append(f"created again: {code} {resp}")
    else:
        await make_topic(env.zk, "again", second)
    if not await wait_online(env.zk, [("again", p) for p in second], timeout_s=30.0):
        out.violations.append(Violation("scenario", "the topic created again never came online"))

    # more partitions, written into the topic znode directly (Kafka's tools' way)
    znode = await env.zk.get(paths.topic("again"))
    current = codec.decode_topic(znode.data)
    grown = dict(current.partitions)
    for p in range(len(grown), len(grown) + 2):
        grown[p] = tuple(rng.sample([1, 2, 3], 2))
    await env.zk.set(
        paths.topic("again"),
        codec.encode_topic(codec.TopicZnode(grown, topic_id=current.topic_id)),
        znode.stat.version,
    )
    added = [("again", p) for p in grown if p not in current.partitions]
    if not await wait_online(env.zk, added, timeout_s=30.0):
        out.violations.append(
            Violation(
                "scenario", f"partitions {[p for _, p in added]} added through the znode never came online"
            )
        )
    expected = {("again", p): rs for p, rs in grown.items()}
    return await finish(env, out, expected, controllers, None, settle_s=30.0)


# --- e. unclean leader election -------------------------------------------------------------------


async def unclean_election(env: Env, seed: int) -> Outcome:
    """Topic ``u`` (unclean.leader.election.enable=true) and topic ``c`` (without), replicas
    1,2,3, broker 3 a live replica far out of sync; brokers 1 and 2 (every ISR member) killed:
    ``u`` gets leader 3, ``c`` stays offline until an ISR member returns."""
    rng = random.Random(seed)
    out = Outcome("unclean_election", seed)
    await set_rate(env.zk, 3, "1000")  # broker 3 never catches up
    controllers = Controllers(env)
    controllers.start(9000)
    brokers: dict[int, Proc] = {b: env.procs.broker(b) for b in (1, 2)}
    if await controllers.wait_active() is None or not await wait_brokers(env.zk, {1, 2}):
        out.violations.append(Violation("scenario", "no active controller and brokers"))
        return out
    for name, config in (("u", {UNCLEAN: "true"}), ("c", {})):
        await make_topic(env.zk, name, {0: (1, 2, 3)}, initial_bytes=50_000_000, config=config)
    await wait_online(env.zk, [("u", 0), ("c", 0)])
    brokers[3] = env.procs.broker(3)

    async def three_out_of_sync() -> bool:
        if not await hosts(env.zk, 3, ("u", 0)) or not await hosts(env.zk, 3, ("c", 0)):
            return False
        states = await invariants.read_states(env.zk, [("u", 0), ("c", 0)])
        return all(s is not None and 3 not in s.isr for s in states.values())

    if not await eventually(three_out_of_sync, 30.0, 0.2, or_none=True):
        out.violations.append(Violation("scenario", "broker 3 never hosted its out-of-sync replicas"))
    order = rng.sample([1, 2], 2)
    out.notes.append(f"killing brokers {order[0]} then {order[1]}")
    brokers[order[0]].kill()

    async def shrunk() -> bool:
        states = await invariants.read_states(env.zk, [("u", 0), ("c", 0)])
        return all(s is not None and order[0] not in s.isr for s in states.values())

    await eventually(shrunk, 30.0, 0.2, or_none=True)
    brokers[order[1]].kill()

    async def unclean_leader() -> codec.PartitionState | None:
        s = (await invariants.read_states(env.zk, [("u", 0)]))[("u", 0)]
        return s if s is not None and s.leader == 3 else None

    if await eventually(unclean_leader, 30.0, 0.2, or_none=True) is None:
        s = (await invariants.read_states(env.zk, [("u", 0)]))[("u", 0)]
        out.violations.append(
            Violation("scenario", f"u-0 got no unclean leader: state {s} with only broker 3 live")
        )
    else:
        await asyncio.sleep(1.0)
        c_state = (await invariants.read_states(env.zk, [("c", 0)]))[("c", 0)]
        if c_state is None or c_state.leader == 3:
            out.violations.append(Violation("scenario", f"c-0 (unclean election off) got state {c_state}"))
    out.notes.append(f"u-0 after the kills: {(await invariants.read_states(env.zk, [('u', 0)]))[('u', 0)]}")
    for b in order:
        brokers[b] = env.procs.restart(brokers[b])
    await wait_brokers(env.zk, {1, 2, 3})
    expected = {("u", 0): (1, 2, 3), ("c", 0): (1, 2, 3)}
    return await finish(env, out, expected, controllers, None, settle_s=30.0)


# --- f. ZooKeeper restarted during a move --------------------------------------------------------


async def zookeeper_restart(env: Env, seed: int) -> Outcome:
    """ZooKeeper stopped (SIGTERM or SIGKILL) and started again on the same port and data while
    partitions move: the moves complete."""
    assert env.server is not None, "needs a ZooKeeper server of its own"
    rng = random.Random(seed)
    out = Outcome("zookeeper_restart", seed)
    await set_rate(env.zk, None, "400000")
    controllers = Controllers(env)
    controllers.start(9000)
    controllers.start(9001)
    env.procs.cluster(4, 1, 2)
    if await controllers.wait_active() is None or not await wait_brokers(env.zk, {1, 2, 3, 4}):
        out.violations.append(Violation("scenario", "no active controller and brokers before the fault"))
        return out
    before, after = _moves(rng, 20, (1, 2), (3, 4), 2)
    before, after = _renamed(before, "zr"), _renamed(after, "zr")
    await make_topic(env.zk, "zr", _by_partition(before), initial_bytes=200_000)
    await wait_online(env.zk, tps_of(before))
    sampler = await OfflineSampler(env.zk_connect, ["zr"]).start()
    try:
        if not await controllers.alter(after):
            out.violations.append(Violation("scenario", "the reassignment was never accepted"))
        await asyncio.sleep(rng.uniform(0.2, 3.0))
        kill = rng.random() < 0.5
        down_s = rng.uniform(0.0, 1.5)
        out.notes.append(f"ZooKeeper restarted ({'SIGKILL' if kill else 'SIGTERM'}, down {down_s:.1f}s)")
        server = env.server
        await asyncio.to_thread(lambda: server.restart(kill=kill, down_s=down_s))
    except BaseException:
        await sampler.stop()
        raise
    return await finish(env, out, after, controllers, sampler)


# --- g. agents killed and restarted mid-move ------------------------------------------------------


async def agent_kills(env: Env, seed: int) -> Outcome:
    """Brokers 1-2 in one cluster process, brokers 3-5 each a process of its own; partitions move
    towards 4 and 5 while seeded brokers among 3-5 are SIGKILLed and started again."""
    rng = random.Random(seed)
    out = Outcome("agent_kills", seed)
    await set_rate(env.zk, None, "300000")
    controllers = Controllers(env)
    controllers.start(9000)
    env.procs.cluster(2, 1, None)
    agents: dict[int, Proc] = {b: env.procs.broker(b) for b in (3, 4, 5)}
    if await controllers.wait_active() is None or not await wait_brokers(env.zk, {1, 2, 3, 4, 5}):
        out.violations.append(Violation("scenario", "no active controller and brokers before the faults"))
        return out
    before, after = _moves(rng, 12, (1, 2, 3), (4, 5), 2)
    before, after = _renamed(before, "ak"), _renamed(after, "ak")
    await make_topic(env.zk, "ak", _by_partition(before), initial_bytes=500_000)
    await wait_online(env.zk, tps_of(before))
    sampler = await OfflineSampler(env.zk_connect, ["ak"]).start()
    try:
        if not await controllers.alter(after):
            out.violations.append(Violation("scenario", "the reassignment was never accepted"))
        for _ in range(2):
            await asyncio.sleep(rng.uniform(0.2, 2.0))
            victim = rng.choice(sorted(agents))
            agents[victim].kill()
            down_s = rng.uniform(0.2, 3.0)
            out.notes.append(f"broker {victim} killed, restarted {down_s:.1f}s later")
            await asyncio.sleep(down_s)
            agents[victim] = env.procs.restart(agents[victim])
        await wait_brokers(env.zk, {1, 2, 3, 4, 5})
    except BaseException:
        await sampler.stop()
        raise
    return await finish(env, out, after, controllers, sampler)


# --- h. the controller's connection cut right after a write --------------------------------------

CUT_POINTS = ("election", "phase_u", "phase_a", "broker_failure", "failover_load", "group_commit")


async def proxy_cut(env: Env, seed: int, point: str) -> Outcome:
    """A controller talks to ZooKeeper through ``proxy.ZkProxy``; the proxy forwards one write of
    ``point`` and drops the connection before its reply reaches the controller (the write is
    applied, the controller cannot know). Afterwards the invariants hold."""
    assert point in CUT_POINTS, point
    rng = random.Random(seed)
    out = Outcome(f"proxy_cut_{point}", seed)
    async with proxy.ZkProxy(env.zk_port) as px:
        via = px.connect(env.chroot)
        controllers = Controllers(env)
        if point == "election":
            out = await _cut_election(env, out, controllers, px, via)
        elif point == "failover_load":
            out = await _cut_failover_load(env, rng, out, controllers, px, via)
        elif point == "broker_failure":
            out = await _cut_broker_failure(env, rng, out, controllers, px, via)
        elif point == "group_commit":
            out = await _cut_group_commit(env, rng, out, controllers, px, via)
        else:
            out = await _cut_reassignment(env, rng, out, controllers, px, via, point)
        out.notes.append(f"proxy: {px.writes_seen} writes seen, {px.cuts_done} cut(s)")
    return out


async def _fired(out: Outcome, cut: proxy.Cut, timeout_s: float = 30.0) -> None:
    try:
        request = await cut.wait(timeout_s)
    except TimeoutError:
        out.violations.append(Violation("scenario", "the proxy never saw the write to cut"))
        return
    out.notes.append(f"cut after {request} (reply from ZooKeeper seen: {cut.reply_seen})")


async def _cut_election(
    env: Env, out: Outcome, controllers: Controllers, px: proxy.ZkProxy, via: str
) -> Outcome:
    cut = px.arm_cut(proxy.election)
    controllers.start(9000, via)
    await _fired(out, cut)
    if await controllers.wait_active(timeout_s=30.0, ready=True) is None:
        out.violations.append(
            Violation("scenario", "the only controller never became active after its election reply was lost")
        )
    env.procs.cluster(3, 1, 3)
    await wait_brokers(env.zk, {1, 2, 3})
    expected = {("el", p): (1 + p % 3, 1 + (p + 1) % 3) for p in range(3)}
    await make_topic(env.zk, "el", _by_partition(expected))
    if not await wait_online(env.zk, tps_of(expected), timeout_s=30.0):
        out.violations.append(Violation("scenario", "a topic created after the cut never came online"))
    return await finish(env, out, expected, controllers, None, settle_s=30.0)


async def _proxied_active(
    env: Env, out: Outcome, controllers: Controllers, via: str, brokers: int
) -> ControllerProc | None:
    """Controller 9000 through the proxy, active; 9001 straight to ZooKeeper, standby."""
    proxied = controllers.start(9000, via)
    if await controllers.wait_active() is not proxied:
        out.violations.append(Violation("scenario", "the proxied controller did not win the first election"))
        return None
    controllers.start(9001)
    env.procs.cluster(brokers, 1, 2)
    if not await wait_brokers(env.zk, set(range(1, brokers + 1))):
        out.violations.append(Violation("scenario", "brokers did not register"))
        return None
    return proxied


async def _moves_ready(
    env: Env, rng: random.Random, out: Outcome, controllers: Controllers, via: str, topic: str
) -> tuple[Assignment, OfflineSampler] | None:
    """A slow copy, the proxied controller active with four brokers, and ``topic``'s 8 partitions
    (RF 2) online on brokers 1-2: their targets (each with a replica on 3 or 4) and a started
    offline sampler. None (a violation noted) when the controller or brokers did not come up."""
    await set_rate(env.zk, None, "300000")
    if await _proxied_active(env, out, controllers, via, 4) is None:
        return None
    before, after = _moves(rng, 8, (1, 2), (3, 4), 2)
    before, after = _renamed(before, topic), _renamed(after, topic)
    await make_topic(env.zk, topic, _by_partition(before), initial_bytes=300_000)
    await wait_online(env.zk, tps_of(before))
    return after, await OfflineSampler(env.zk_connect, [topic]).start()


async def _cut_reassignment(
    env: Env,
    rng: random.Random,
    out: Outcome,
    controllers: Controllers,
    px: proxy.ZkProxy,
    via: str,
    point: str,
) -> Outcome:
    started = await _moves_ready(env, rng, out, controllers, via, "pc")
    if started is None:
        return out
    after, sampler = started
    try:
        # phase U writes the topic znode; phase A then bumps the leader epochs in the state znodes
        cut = px.arm_cut(proxy.topic_write("pc") if point == "phase_u" else proxy.state_write)
        # One request, not retried when the answer is NOT_CONTROLLER: ZooKeeper applied the cut
        # write, so the reassignment is durable and must complete without the client's help.
        accepted = await controllers.alter(after, retry=False)
        out.notes.append(f"the request was {'accepted' if accepted else 'refused (not retried)'}")
        await _fired(out, cut)
        if not cut.reply_seen and not await controllers.alter(after):  # the write may be lost
            out.violations.append(Violation("scenario", "the reassignment was never accepted"))
    except BaseException:
        await sampler.stop()
        raise
    return await finish(env, out, after, controllers, sampler)


async def _cut_group_commit(
    env: Env, rng: random.Random, out: Outcome, controllers: Controllers, px: proxy.ZkProxy, via: str
) -> Outcome:
    """Eight requests at once, one partition each: the ones queued behind the first are handled
    as one group (one phase-U write of the topic znode). The second phase-U write is cut: every
    request of that group has an unknown outcome; each not accepted is sent again, as a client
    does, and every partition must end at its target, none moved twice or half."""
    started = await _moves_ready(env, rng, out, controllers, via, "gc")
    if started is None:
        return out
    after, sampler = started
    try:
        cut = px.arm_cut(proxy.topic_write("gc"), nth=2)
        accepted = await asyncio.gather(
            *(controllers.alter({tp: rs}, retry=False) for tp, rs in sorted(after.items()))
        )
        out.notes.append(f"{sum(accepted)} of 8 requests accepted before the cut")
        await _fired(out, cut)
        for (tp, rs), ok in zip(sorted(after.items()), accepted, strict=True):
            if not ok and not await controllers.alter({tp: rs}):
                out.violations.append(Violation("scenario", f"the move of {tp} was never accepted"))
    except BaseException:
        await sampler.stop()
        raise
    return await finish(env, out, after, controllers, sampler)


async def _cut_broker_failure(
    env: Env,
    rng: random.Random,
    out: Outcome,
    controllers: Controllers,
    px: proxy.ZkProxy,
    via: str,
) -> Outcome:
    if await _proxied_active(env, out, controllers, via, 2) is None:
        return out
    victim = env.procs.broker(3)
    await wait_brokers(env.zk, {1, 2, 3})
    expected: dict[TopicPartition, tuple[int, ...]] = {
        ("bf", p): (3, *rng.sample([1, 2], 2)) for p in range(6)
    }
    await make_topic(env.zk, "bf", _by_partition(expected))
    await wait_online(env.zk, tps_of(expected))
    sampler = await OfflineSampler(env.zk_connect, ["bf"]).start()
    try:
        cut = px.arm_cut(proxy.state_write)  # the first leader election / ISR shrink it writes
        victim.kill()
        await _fired(out, cut)

        async def led_by_survivors() -> bool:
            states = await invariants.read_states(env.zk, tps_of(expected))
            return all(s is not None and s.leader in (1, 2) and 3 not in s.isr for s in states.values())

        # broker 3 stays dead until its partitions have new leaders (its return would hide a
        # controller that dropped the broker failure half-handled)
        if not await eventually(led_by_survivors, 20.0, 0.2, or_none=True):
            states = await invariants.read_states(env.zk, tps_of(expected))
            out.violations.append(
                Violation(
                    "scenario",
                    "broker 3's partitions did not all get a leader among brokers 1-2 (ISR without 3): "
                    + ", ".join(f"{t}-{p} {s}" for (t, p), s in states.items()),
                )
            )
        await asyncio.sleep(rng.uniform(0.0, 1.0))
        env.procs.restart(victim)
        await wait_brokers(env.zk, {1, 2, 3})
    except BaseException:
        await sampler.stop()
        raise
    return await finish(env, out, expected, controllers, sampler)


async def _cut_failover_load(
    env: Env,
    rng: random.Random,
    out: Outcome,
    controllers: Controllers,
    px: proxy.ZkProxy,
    via: str,
) -> Outcome:
    """9000 straight to ZooKeeper is active with moves in flight; 9001 through the proxy. 9000 is
    killed; 9001 wins, and the proxy cuts the first write after its election: its failover load
    resuming the moves, whose leader-epoch bumps (phase A) go in one multi."""
    await set_rate(env.zk, None, "100000")
    first = controllers.start(9000)
    if await controllers.wait_active() is not first:
        out.violations.append(Violation("scenario", "controller 9000 did not win the first election"))
        return out
    controllers.start(9001, via)
    env.procs.cluster(4, 1, 2)
    await wait_brokers(env.zk, {1, 2, 3, 4})
    before, after = _moves(rng, 8, (1, 2), (3, 4), 2)
    before, after = _renamed(before, "fl"), _renamed(after, "fl")
    await make_topic(env.zk, "fl", _by_partition(before), initial_bytes=600_000)
    await wait_online(env.zk, tps_of(before))
    sampler = await OfflineSampler(env.zk_connect, ["fl"]).start()
    try:
        if not await controllers.alter(after):
            out.violations.append(Violation("scenario", "the reassignment was never accepted"))
        # the load's only write: the 8 moving partitions' epoch bumps, one multi (a later write
        # would be the moves' completion, long after the load)
        cut = px.arm_cut(proxy.after(proxy.election, proxy.any_write), 1)
        out.notes.append("cutting the first write after 9001's election")
        controllers.kill(9000)
        await _fired(out, cut)
        controllers.restart(9000)
    except BaseException:
        await sampler.stop()
        raise
    return await finish(env, out, after, controllers, sampler)


async def proxy_outage(env: Env, seed: int) -> Outcome:
    """The active controller's ZooKeeper link turns slow (replies delayed by up to 1.5 s), then
    goes away for longer than the session timeout (connections cut and refused) while partitions
    move: its session expires, the standby takes over, the moves complete."""
    rng = random.Random(seed)
    out = Outcome("proxy_outage", seed)
    async with proxy.ZkProxy(env.zk_port) as px:
        controllers = Controllers(env)
        await set_rate(env.zk, None, "300000")
        if await _proxied_active(env, out, controllers, px.connect(env.chroot), 4) is None:
            return out
        before, after = _moves(rng, 8, (1, 2), (3, 4), 2)
        before, after = _renamed(before, "po"), _renamed(after, "po")
        await make_topic(env.zk, "po", _by_partition(before), initial_bytes=400_000)
        await wait_online(env.zk, tps_of(before))
        sampler = await OfflineSampler(env.zk_connect, ["po"]).start()
        try:
            if not await controllers.alter(after):
                out.violations.append(Violation("scenario", "the reassignment was never accepted"))
            await asyncio.sleep(rng.uniform(0.2, 1.5))
            delay_ms, slow_s = rng.uniform(200, 1500), rng.uniform(1.0, 3.0)
            px.set_delay(delay_ms)
            await asyncio.sleep(slow_s)
            away_s = SESSION_TIMEOUT_S + rng.uniform(0.5, 3.0)
            out.notes.append(
                f"replies delayed {delay_ms:.0f} ms for {slow_s:.1f}s, then the link away for {away_s:.1f}s"
            )
            px.refuse_for(away_s)
            px.cut_all()
            await asyncio.sleep(away_s)
            px.set_delay(0)
        except BaseException:
            await sampler.stop()
            raise
        out = await finish(env, out, after, controllers, sampler)
        out.notes.append(f"proxy: {px.connections_refused} connections refused, {px.writes_seen} writes seen")
    return out


SCENARIOS: dict[str, Callable[[Env, int], Awaitable[Outcome]]] = {
    "controller_kills": controller_kills,
    "zookeeper_freeze": zookeeper_freeze,
    "zookeeper_restart": zookeeper_restart,
    "agent_kills": agent_kills,
    "cancel_while_no_controller": cancel_while_no_controller,
    "recreate_topic_api": functools.partial(recreate_topic, via="api"),
    "recreate_topic_znode": functools.partial(recreate_topic, via="znode"),
    "unclean_election": unclean_election,
    **{f"proxy_cut_{point}": functools.partial(proxy_cut, point=point) for point in CUT_POINTS},
    "proxy_outage": proxy_outage,
}
NEEDS_OWN_ZOOKEEPER = frozenset({"zookeeper_freeze", "zookeeper_restart"})


_NOTEWORTHY = ("WARNING", "ERROR", "CRITICAL", "Traceback", "elected", "resign", "ready:")


def explain(outcome: Outcome, env: Env, lines_per_process: int = 25) -> str:
    """A failure message: the outcome, then the noteworthy log lines of each controller."""
    parts = [
        f"scenario {outcome.kind} seed {outcome.seed}",
        *(f"  note: {n}" for n in outcome.notes),
        *(f"  violation: {v}" for v in outcome.violations),
        *(f"  offline: {o}" for o in outcome.offline),
    ]
    for proc in env.procs.started:
        if proc.args[:1] != ["controller"]:
            continue
        try:
            text = proc.log()
        except OSError:
            continue
        picked = [line for line in text.splitlines() if any(w in line for w in _NOTEWORTHY)]
        parts.append(f"--- {proc.log_path.name} ({len(picked)} noteworthy lines, last {lines_per_process})")
        parts.extend(picked[-lines_per_process:])
    return "\n".join(parts)


def assert_clean(outcome: Outcome, env: Env) -> None:
    """The scenario's expectations, the invariants and the offline sampler all came out clean."""
    print(f"{outcome.kind} seed {outcome.seed}: {'; '.join(outcome.notes)}")  # shown with -s or on failure
    assert outcome.violations == [] and outcome.offline == [], explain(outcome, env)
