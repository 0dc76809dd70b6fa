"""The failover load (Kafka's onControllerFailover, in the order of its KafkaController): read the
whole cluster, bring every partition online, tell every broker everything (a full LeaderAndIsr,
so each deletes its stray replicas), rebuild the KIP-236 state before acting on it, then resume
what was in flight.
"""

from __future__ import annotations

import logging

from reassignd.controller import loader
from reassignd.controller.active import ActiveParts
from reassignd.controller.context import ControllerContext
from reassignd.controller.events import IsrChangeNotified, TopicsChanged
from reassignd.controller.shared import Shared
from reassignd.zk import codec, paths

log = logging.getLogger(__name__)


async def load_origins(shared: Shared, ctx: ControllerContext) -> None:
    """The recorded replica order before each move (for the topics with moves in flight); a
    record that does not match a partition's ORS as a set is ignored."""
    moving = sorted({t for t, _ in ctx.reassigning})
    for topic, znode in zip(
        moving, await shared.zk.get_many([paths.topic_origins(t) for t in moving]), strict=True
    ):
        if znode is None:
            continue
        ctx.origin_znodes.add(topic)
        try:
            recorded = codec.decode_origins(znode.data)
        except codec.CodecError as e:
            shared.report(paths.topic_origins(topic), e.reason, "origins")
            continue
        ctx.origins[topic] = {
            p: r
            for p, r in recorded.items()
            if (a := ctx.assignment((topic, p))) is not None
            and a.is_being_reassigned
            and set(r) == set(a.original_replicas)
        }


async def load(shared: Shared, parts: ActiveParts) -> None:
    ctx = parts.ctx
    phases: list[tuple[str, float]] = []
    mark = shared.clock()

    def phase(name: str) -> None:
        nonlocal mark
        now = shared.clock()
        phases.append((name, now - mark))
        mark = now

    await parts.writer.ensure_cluster_id()
    stale = await shared.children(paths.ISR_CHANGE_NOTIFICATION, IsrChangeNotified())
    if stale:
        await parts.writer.delete_all([paths.isr_change(c) for c in stale])
    await parts.brokers.load()
    phase("brokers")
    names = await shared.children(paths.BROKER_TOPICS, TopicsChanged())
    znodes = await loader.read_topics(shared.zk, names, parts.topic_events.watch_topic, shared.report)
    ctx.malformed_topics.update(set(names) - set(znodes))
    for topic, znode in znodes.items():
        ctx.put_topic(topic, znode.topic_id, loader.assignment_of(znode))
    phase("topics")
    all_tps = list(ctx.all_partitions())
    read_since = shared.zk.last_zxid  # every state read below reflects at least this zxid
    states, malformed = await loader.read_states(shared.zk, all_tps, shared.report)
    ctx.states.update(states)
    ctx.malformed_states.update(malformed)
    ctx.dirty_topics.update(znodes)
    await load_origins(shared, ctx)
    phase("states")
    batch = parts.batch()
    await parts.elections.online_partitions(all_tps, batch)
    for b in ctx.brokers:  # full LeaderAndIsr (KIP-516): each broker deletes its stray replicas
        batch.add_full_leader_and_isr(b)
    batch.add_update_metadata(ctx.states)
    phase("online")
    await parts.topic_events.load_topic_deletions()
    await parts.quotas.load()
    # resume reassignments: the cancel znode and the legacy znode first (it takes precedence, as
    # in Kafka), then pending KIP-236 requests in order, then every other partition with
    # non-empty AR/RR
    intake, sequenced = parts.intake, parts.sequenced
    parts.reassigner.states_read_since = read_since  # no state read again to arm its watch
    try:
        await sequenced.load_status()
        await intake.load_pending()
        await intake.on_cancel_znode(batch)
        await intake.on_legacy_znode(batch)
        await intake.on_extra_znode(batch)
        await sequenced.on_requests(batch)
        handled = intake.legacy_partitions() | set(sequenced.status)
        await parts.reassigner.resume(sorted(ctx.reassigning - handled), batch)
        await parts.reassigner.resume(sorted(set(sequenced.status) & ctx.reassigning), batch)
        await parts.runner.load(batch)
    finally:
        parts.reassigner.states_read_since = None
    phase("reassignments")
    await parts.finisher.after_reassignments(batch)
    phase("requests")
    await parts.finisher.resume_deletions()
    log.info(
        "controller ready: %d brokers, %d topics, %d partitions (%d reassigning); %s",
        len(ctx.brokers),
        len(ctx.assignments),
        len(ctx.states),
        len(ctx.reassigning),
        ", ".join(f"{name} {took:.2f}s" for name, took in phases),
    )
