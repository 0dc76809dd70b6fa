"""The sampler of the agents' reports: what adaptive concurrency and self-healing act on.

The controller never asks the agents anything itself (its event loop waits on no agent). This
task does, every ``--agent-sample-interval-s``, and only while the active controller has a use
for the answer:

- a batch with adaptive concurrency is pending or running: the reports of its brokers give each
  broker's fetch rate and bandwidth (``executor.adaptive.BrokerRate``) and the batch's stuck moves
  (Cruise Control's rule, ``--batch-stuck-after-s`` and ``--batch-stuck-below-bytes-per-s``);
- a lost broker's grace ends within two intervals (or is over and no batch heals it yet): the
  reports of the leaders of its partitions give their sizes, which self-healing plans with.

The sample goes to the controller as an event (``ControllerView.agents_sampled``); one taken
against a snapshot of another controller epoch is dropped, here or there. Which agents to ask
and what the answers mean are pure functions (:func:`wanted`, :func:`build_sample`); the clock is
injected.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import aiohttp

from reassignd.agent_reports.batch_inputs import batch_inputs, brokers_to_ask, leader_sizes, leaders_of
from reassignd.agent_reports.fetch import agent_urls, fetch_reports
from reassignd.agent_reports.progress import index_reports
from reassignd.control.replicas_report import ReplicasReport
from reassignd.controller.api.port import ControllerView
from reassignd.controller.model.samples import AgentSample
from reassignd.controller.model.snapshot import ClusterSnapshot
from reassignd.executor.adaptive import fetch_rates
from reassignd.executor.dir_moves import places_of
from reassignd.executor.model import Batch, BatchMoveState, BatchState
from reassignd.executor.progress import StuckRule, batch_status
from reassignd.topic_partition import TopicPartition

log = logging.getLogger(__name__)

SIZES_AHEAD = 2  # sizes are read this many intervals before a lost broker's grace ends


@dataclass(frozen=True, slots=True)
class SampleTargets:
    """What one round reads: the batches to adjust, the partitions whose sizes self-healing
    needs, and the agents to ask for both."""

    batches: tuple[Batch, ...]
    sizes_of: frozenset[TopicPartition]
    brokers: frozenset[int]

    def __bool__(self) -> bool:
        return bool(self.batches or self.sizes_of)


def adaptive_batches(snapshot: ClusterSnapshot) -> tuple[Batch, ...]:
    return tuple(
        b
        for b in snapshot.batches.values()
        if b.spec.limits.adaptive is not None and b.state in (BatchState.PENDING, BatchState.RUNNING)
    )


def wanted(snapshot: ClusterSnapshot, now_ms: int, interval_s: float) -> SampleTargets:
    """What to read now (empty: nothing needs a sample)."""
    if not snapshot.active:
        return SampleTargets((), frozenset(), frozenset())
    batches = adaptive_batches(snapshot)
    brokers = brokers_to_ask(batches, snapshot)
    for batch in batches:  # every broker the batch's moves may add to reports its rate
        brokers.update(b for _tp, m in batch.in_state(BatchMoveState.PENDING) for b in m.target)
    sizes_of: set[TopicPartition] = set()
    healing = snapshot.self_healing
    if healing is not None and healing.enabled:
        ahead_ms = round(SIZES_AHEAD * interval_s * 1000)
        for lost in healing.brokers:
            if lost.state == "waiting" and lost.heal_at_ms - ahead_ms <= now_ms:
                sizes_of.update(lost.partitions)
    leaders = leaders_of(snapshot, sizes_of)
    brokers.update(leaders.values())
    return SampleTargets(batches, frozenset(sizes_of), frozenset(b for b in brokers if b in snapshot.brokers))


def build_sample(
    snapshot: ClusterSnapshot,
    want: SampleTargets,
    reports: Mapping[int, ReplicasReport],
    rule: StuckRule,
    now_ms: int,
) -> AgentSample:
    """The sample a round's reports make."""
    replicas = index_reports(reports)
    places = places_of(reports)
    followers = (
        (broker_id, r.fetch_bytes_per_s, r.in_isr)
        for broker_id, report in reports.items()
        for r in report.replicas
        if not r.leader
    )
    rates = fetch_rates(followers, {b: r.replication_bytes_per_s for b, r in reports.items()})
    stuck: dict[str, int] = {}
    for batch in want.batches:
        inputs = batch_inputs(batch, snapshot, replicas, places)
        status = batch_status(batch, inputs.progress, inputs.sizes, now_ms, rule)
        stuck[batch.batch_id] = len(status.stuck)
    sizes = leader_sizes(leaders_of(snapshot, want.sizes_of), replicas)
    return AgentSample(snapshot.controller_epoch, rates, stuck, sizes)


async def sample_agents(
    view: ControllerView,
    interval_s: float,
    rule: StuckRule,
    wall_clock: Callable[[], float] = time.time,
    *,
    agents: aiohttp.ClientSession,
) -> None:
    """Runs until cancelled, asking the agents through ``agents`` (the process's one session)."""
    while True:
        await asyncio.sleep(interval_s)
        snapshot = view.snapshot()
        now_ms = int(wall_clock() * 1000)
        want = wanted(snapshot, now_ms, interval_s)
        if not want:
            continue
        try:
            reports = await fetch_reports(agents, agent_urls(snapshot.brokers, want.brokers))
        except (aiohttp.ClientError, OSError) as e:  # fetch_reports already tolerates one agent
            log.debug("no sample this round: %r", e)
            continue
        if view.snapshot().controller_epoch != snapshot.controller_epoch:
            continue  # resigned or re-elected meanwhile: these figures belong to no one
        view.agents_sampled(build_sample(snapshot, want, reports, rule, int(wall_clock() * 1000)))
