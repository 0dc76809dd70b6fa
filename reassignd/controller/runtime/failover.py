"""The failover load (Kafka's onControllerFailover, in the order of its KafkaController): read the
whole cluster, bring every partition online, tell every broker everything (a full LeaderAndIsr,
so each deletes its stray replicas), rebuild the KIP-236 state before acting on it, then resume
what was in flight, pending preferred-replica elections of ``/admin/preferred_replica_election``
included.

**The poison guard.** The cluster itself (brokers, topics, partition states) must load — a
topic or partition whose write ZooKeeper refuses the same way every time (NOAUTH: another
principal owns its znode) is given up by the writer, reported, and the others load; every
step after it handles inputs someone else wrote (intake znodes, sequenced requests, batch
journals, quota configs, deletions). A step that fails the same way every time (a deterministic
failure, ``failures.classify``) is skipped and reported, and the load completes without it: the
input that broke it cannot make every new controller resign in turn. A failure whose outcome is
unknown (a lost connection) still fails the load, and the instance resigns.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from reassignd.concurrency import pace
from reassignd.controller.effects import failures
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.instance.events import IsrChangeNotified, TopicsChanged
from reassignd.controller.instance.shared import Shared
from reassignd.controller.reads import loader
from reassignd.controller.runtime.active import ActiveParts
from reassignd.controller.runtime.apply import apply
from reassignd.controller.state.context import ControllerContext
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.errors import NodeExistsError
from reassignd.zk.values import Create

log = logging.getLogger(__name__)

_STATES_PER_SLICE = 5_000  # states indexed between two looks at the loop's pace


async def load_origins(shared: Shared, ctx: ControllerContext) -> None:
    """The moves' original replicas in their order, as the origins znodes record them (for the
    topics with moves in flight); a record that does not match a partition's ORS as a set is
    ignored."""
    moving = sorted({t for t, _ in ctx.reassigning})
    for topic, znode in zip(
        moving, await shared.reads.get_many([paths.topic_origins(t) for t in moving]), strict=True
    ):
        if znode is None:
            continue
        ctx.origin_znodes.add(topic)
        try:
            recorded = admin_codec.decode_origins(znode.data)
        except codec.CodecError as e:
            shared.report(paths.topic_origins(topic), e.reason, "origins")
            continue
        ctx.load_origins(topic, recorded)


async def ensure_cluster_id(shared: Shared, out: EventOutputs) -> None:
    """The cluster id, created when there is none (one another controller created first stays)."""
    if await shared.reads.exists(paths.CLUSTER_ID) is None:
        data = codec.encode_cluster_id(codec.new_uuid_base64())
        await out.writes.write([Create(paths.CLUSTER_ID, data)], expect=(NodeExistsError,))


async def skippable(shared: Shared, what: str, step: Callable[[], Awaitable[None]]) -> bool:
    """Run one step of the load; a deterministic failure skips it (reported). False if skipped."""
    try:
        await step()
    except Exception as e:
        if failures.classify(e) is not failures.Failure.DETERMINISTIC:
            raise
        refusal = failures.describe(e)
        log.warning(
            "failover load: %s skipped: %s", what, refusal.reason, exc_info=e if refusal.bug else None
        )
        shared.refuse(
            refusal.path or what, f"failover load: {what} skipped: {refusal.reason}", "failover_load"
        )
        return False
    return True


async def load(shared: Shared, parts: ActiveParts) -> None:
    ctx = parts.ctx
    phases: list[tuple[str, float]] = []
    mark = shared.clock()

    def phase(name: str) -> None:
        nonlocal mark
        now = shared.clock()
        phases.append((name, now - mark))
        mark = now

    out = parts.event_outputs()  # the load's outputs, one value for all its steps

    async def ensure_paths() -> None:
        for path in await out.writes.ensure_paths(paths.PERSISTENT_PATHS):
            shared.refuse(path, "missing (deleted outside the controller): re-created", "persistent_path")

    await skippable(shared, "the persistent paths", ensure_paths)
    await skippable(shared, "the cluster id", lambda: ensure_cluster_id(shared, out))
    stale = await out.writes.children(
        paths.ISR_CHANGE_NOTIFICATION, shared.watch(paths.ISR_CHANGE_NOTIFICATION, IsrChangeNotified())
    )
    if stale:
        await skippable(
            shared,
            "the stale ISR change notifications",
            lambda: out.writes.delete_all([paths.isr_change(c) for c in stale]),
        )
    await parts.brokers.load(out)
    phase("brokers")
    names = await out.writes.children(paths.BROKER_TOPICS, shared.watch(paths.BROKER_TOPICS, TopicsChanged()))
    znodes = await loader.read_topics(shared.reads, names, parts.topic_events.watch_topic, shared.report)
    ctx.malformed_topics.update(set(names) - set(znodes))
    for i, (topic, znode) in enumerate(znodes.items()):
        if i % 20 == 0:
            await pace()  # 100k partitions' assignments: the loop is not held meanwhile
        ctx.put_topic(topic, znode.topic_id, loader.assignment_of(znode))
    phase("topics")
    all_tps = list(ctx.all_partitions())
    read_since = shared.reads.last_zxid  # every state read below reflects at least this zxid
    states, malformed = await loader.read_states(shared.reads, all_tps, shared.report)
    loaded = list(states.items())
    for i in range(0, len(loaded), _STATES_PER_SLICE):  # the loop is not held by 100k at once
        await pace()
        ctx.load_states(dict(loaded[i : i + _STATES_PER_SLICE]))
    ctx.malformed_states.update(malformed)
    ctx.dirty_topics.update(znodes)
    await skippable(
        shared, "the moves' original replicas (origins znodes)", lambda: load_origins(shared, ctx)
    )
    phase("states")
    broker_requests = out.requests
    await parts.elections.online_partitions(all_tps, out)
    for b in ctx.brokers:  # full LeaderAndIsr (KIP-516): each broker deletes its stray replicas
        broker_requests.add_full_leader_and_isr(b)
    broker_requests.add_full_update_metadata()
    phase("online")
    await skippable(shared, "the topic deletions", lambda: parts.topic_events.load_topic_deletions(out))
    await skippable(shared, "the client quotas", lambda: parts.quotas.load(out))
    await skippable(shared, "the demotion records", lambda: parts.demotions.load(out))
    # resume reassignments: the cancel znode and the legacy znode first (it takes precedence, as
    # in Kafka), then pending KIP-236 requests in order, then every other partition with
    # non-empty AR/RR; each intake a step of its own (the poison guard)
    intake, sequenced = parts.intake, parts.sequenced
    parts.reassigner.states_read_since = read_since  # no state read again to arm its watch
    try:
        await skippable(shared, "the sequenced request status nodes", lambda: sequenced.load_status(out))
        await skippable(shared, "the pending legacy reassignments", intake.load_pending)
        await skippable(shared, paths.REASSIGN_CANCEL, lambda: intake.on_cancel_znode(out))
        await skippable(shared, paths.REASSIGN_PARTITIONS, lambda: intake.on_legacy_znode(out))
        await skippable(shared, paths.REASSIGN_PARTITIONS_EXTRA, lambda: intake.on_extra_znode(out))
        await skippable(shared, paths.REASSIGNMENT_REQUESTS, lambda: sequenced.on_requests(out))
        requested = {tp for tp, move in ctx.moves.items() if move.request_status}  # KIP-236's
        handled = intake.legacy_partitions() | requested
        await skippable(
            shared,
            "the reassignments in flight",
            lambda: parts.reassigner.resume(sorted(ctx.reassigning - handled), out),
        )
        await skippable(
            shared,
            "the sequenced reassignments in flight",
            lambda: parts.reassigner.resume(sorted(requested), out),
        )
        await skippable(shared, "the batch journals", lambda: parts.runner.load(out))
        await skippable(shared, "the self-healing records", lambda: parts.healing.load(out))
        await skippable(shared, "self-healing", lambda: parts.healing.evaluate(out))
    finally:
        parts.reassigner.states_read_since = None
    phase("reassignments")
    # Kafka's pending ZooKeeper-triggered preferred-replica elections (the znode's watch armed)
    await skippable(shared, paths.PREFERRED_REPLICA_ELECTION, lambda: parts.leaders.on_znode(out))
    await skippable(shared, "the end of the load", lambda: parts.finisher.after_reassignments(out))
    await skippable(shared, "the topic deletions in progress", lambda: parts.finisher.resume_deletions(out))
    await apply(shared, out)  # the load's requests go out (whatever a skipped step left in them too)
    phase("requests")
    log.info(
        "controller ready: %d brokers, %d topics, %d partitions (%d reassigning); %s",
        len(ctx.brokers),
        len(ctx.assignments),
        len(ctx.states),
        len(ctx.reassigning),
        ", ".join(f"{name} {took:.2f}s" for name, took in phases),
    )
