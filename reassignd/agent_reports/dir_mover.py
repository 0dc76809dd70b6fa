"""The batches' moves between log dirs (JBOD), carried out: the I/O around
:mod:`reassignd.executor.dir_moves`.

The controller's event loop waits on no agent, so this task does, every
``--dir-move-interval-s``, while some batch has a move in its dir phase (or one a stop cancelled
there): it reads the agents' reports of the pinned replicas' brokers, decides
(:func:`reassignd.executor.dir_moves.decide`), and hands the controller what to journal — the
moves about to be asked (with the dirs their replicas are in) and the moves that arrived — as
an event (``ControllerView.dir_moves_seen``). It asks an agent (``POST /log-dirs/alter``) only
once the snapshot shows the move journaled as asked, and only for a replica the report shows
neither in its dir nor on its way there; an agent's refusal is handed back as a failed move.
A round taken against another controller epoch is dropped, here or there.

The agent is asked through :func:`reassignd.agent_reports.log_dir_moves.forward_log_dir_moves`,
the one forwarding function the Kafka listener's AlterReplicaLogDirs and ``POST
/v1/log-dirs/moves`` use too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import aiohttp

from reassignd.agent_reports.batch_inputs import at_target
from reassignd.agent_reports.fetch import agent_urls, fetch_reports
from reassignd.agent_reports.log_dir_moves import forward_log_dir_moves
from reassignd.control.log_dir_moves import LogDirMove
from reassignd.controller.api.port import ControllerView
from reassignd.controller.model.samples import DirMovesSeen
from reassignd.executor.dir_moves import brokers_to_ask, decide, places_of
from reassignd.executor.model import Batch, BatchMove
from reassignd.topic_partition import TopicPartition

log = logging.getLogger(__name__)

NONE = 0


async def alter_log_dirs(
    session: aiohttp.ClientSession, broker_id: int, url: str, moves: Sequence[LogDirMove]
) -> list[int] | None:
    """Each move's error code from the agent (Kafka's: NONE, LOG_DIR_NOT_FOUND,
    REPLICA_NOT_AVAILABLE, KAFKA_STORAGE_ERROR), or None when the agent did not answer (logged)."""
    answer = await forward_log_dir_moves(session, broker_id, url, moves)
    return None if answer is None else [r.error_code for r in answer.results]


async def move_dirs(view: ControllerView, interval_s: float, *, agents: aiohttp.ClientSession) -> None:
    """Runs until cancelled, asking the agents through ``agents`` (the process's one session)."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            await one_round(view, agents)
        except (aiohttp.ClientError, OSError) as e:  # fetch_reports already tolerates one agent
            log.debug("no dir move round this time: %r", e)


async def one_round(view: ControllerView, session: aiohttp.ClientSession) -> DirMovesSeen | None:
    """One round: reports read, agents asked, the round handed to the controller (and returned)."""
    snapshot = view.snapshot()
    if not snapshot.active:
        return None
    batches: list[Batch] = list(snapshot.batches.values())

    def placed(tp: TopicPartition, move: BatchMove) -> bool:
        return at_target(snapshot, tp, move)

    wanted = brokers_to_ask(batches, placed)
    if not wanted:
        return None
    urls = agent_urls(snapshot.brokers, wanted)
    reports = await fetch_reports(session, urls)
    decided = decide(batches, placed, places_of(reports), frozenset(reports), {})
    failed: dict[str, dict[TopicPartition, str]] = {}
    owner = {
        (tp, b): batch.batch_id for batch in batches for tp, move in batch.moves.items() for b in move.pinned
    }
    for broker_id, moves in sorted(decided.ask.items()):
        codes = await alter_log_dirs(session, broker_id, urls[broker_id], moves)
        for m, code in zip(moves, codes or (), strict=False):
            if code != NONE and (batch_id := owner.get(((m.topic, m.partition), broker_id))) is not None:
                failed.setdefault(batch_id, {})[(m.topic, m.partition)] = (
                    f"broker {broker_id} refused the move to {m.log_dir}: error {code}"
                )
        if moves:
            log.info("asked broker %d to move %d replicas between its log dirs", broker_id, len(moves))
    seen = DirMovesSeen(snapshot.controller_epoch, decided.asking, decided.done, failed)
    if (
        seen.asking or seen.done or seen.failed
    ) and view.snapshot().controller_epoch == snapshot.controller_epoch:
        view.dir_moves_seen(seen)
    return seen
