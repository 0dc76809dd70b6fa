"""The batch journals in ZooKeeper: read at failover, written by the commit rule, deleted when
their retention is over (the shell around ``executor/journal.py`` and ``executor/commit.py``).
Every write goes through the event's fenced write gateway (``out.writes``).

The head is the commit point (``executor/commit.py``): a change's new znodes are written first
under names no head named, then the head naming them, then the znodes it no longer names are
deleted. The load reads only what a head names and deletes the rest; an empty head is a
submission never committed (or a deletion cut short), deleted whole.
"""

from __future__ import annotations

import logging

from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.reads import loader
from reassignd.executor import commit, journal
from reassignd.executor import paths as batch_paths
from reassignd.executor.commit import UNCOMMITTED, Commit
from reassignd.executor.errors import BatchIdInUse
from reassignd.executor.journal import Layout
from reassignd.executor.model import Batch
from reassignd.zk import codec
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import Create, Delete, Op, SetData

log = logging.getLogger(__name__)

KIND = "batch_journal"


class JournalStore:
    def __init__(self, reads: ZkReads, report: loader.Report, refuse: loader.Report) -> None:
        self.reads = reads
        self._report = report
        self._refuse = refuse  # a persistent path re-created
        self.layouts: dict[str, Layout] = {}  # what each journal's head names
        self._generations: dict[str, int] = {}  # the next change's generation, per batch

    # --- reading -------------------------------------------------------------------------------------

    async def load(self, out: EventOutputs) -> list[Batch]:
        """Failover: every journal a head commits (debris deleted); a journal that cannot be
        decoded is reported and left as it is."""
        await out.writes.ensure_paths([batch_paths.BATCHES])
        loaded = []
        names = await out.writes.children(batch_paths.BATCHES, None)
        for batch_id in sorted(names):
            batch = await self._load(batch_id, out)
            if batch is not None:
                loaded.append(batch)
        return loaded

    async def _load(self, batch_id: str, out: EventOutputs) -> Batch | None:
        path = batch_paths.batch(batch_id)
        head = await self.reads.get_or_none(path)
        if head is None:
            return None
        children = await self.reads.children(path)
        if not head.data:
            log.warning("batch journal %s has no head (a submission cut short): deleting it", path)
            await self._delete(batch_id, children, out)
            return None
        try:
            decoded = journal.decode_head(head.data)
            chunks = decoded.layout.chunk_names()
            znodes = await self.reads.get_many(
                [batch_paths.child(batch_id, n) for n in (*chunks, *decoded.layout.throttle_names())]
            )
            data = [z.data if z is not None else None for z in znodes]
            loaded = journal.decode_journal(decoded, data[: len(chunks)], data[len(chunks) :])
        except codec.CodecError as e:
            self._report(path, f"batch journal skipped: {e.reason}", KIND)
            return None
        if loaded.problems:
            self._report(
                path,
                "throttle records left out, their throttles are not restored: " + "; ".join(loaded.problems),
                KIND,
            )
        self.layouts[batch_id] = loaded.layout
        self._generations[batch_id] = commit.next_generation(loaded.layout, children)
        if debris := commit.debris(loaded.layout, children):
            log.info(
                "batch journal %s: deleting %d znodes no head names (a change cut short)", path, len(debris)
            )
            await out.writes.write([Delete(batch_paths.child(batch_id, n), -1) for n in debris])
        return loaded.batch

    async def clear_for(self, batch_id: str, out: EventOutputs) -> None:
        """Before a submission of ``batch_id`` (unknown to the controller): the debris of one
        never committed goes; a journal that could not be decoded refuses the id (10004)."""
        path = batch_paths.batch(batch_id)
        head = await self.reads.get_or_none(path)
        if head is None:
            return
        if head.data:
            raise BatchIdInUse(
                f"batch id {batch_id!r} is in use by a journal the controller cannot read "
                "(see the problems in GET /v1/status)"
            )
        await self._delete(batch_id, await self.reads.children(path), out)

    # --- writing -------------------------------------------------------------------------------------

    async def write(self, new: Batch, old: Batch | None, out: EventOutputs) -> None:
        """``new``'s journal (``old``: the batch its journal holds now; None for a submission).
        Raises JournalTooLarge, with nothing written, when a znode would be too large."""
        batch_id = new.batch_id
        generation = self._generations.get(batch_id, 1)
        if old is None:
            plan = commit.submission(new, generation)
        else:
            plan = commit.update(old, self.layouts[batch_id], new, generation)
        self._generations[batch_id] = generation + 1  # never reused, even by a write that failed
        await self._apply(plan, out)
        self.layouts[batch_id] = plan.layout

    async def _apply(self, plan: Commit, out: EventOutputs) -> None:
        path = batch_paths.batch(plan.batch_id)
        create: list[Op] = [Create(batch_paths.child(plan.batch_id, n), data) for n, data in plan.create]
        delete: list[Op] = [Delete(batch_paths.child(plan.batch_id, n), -1) for n in plan.delete]
        head: Op = Create(path, plan.head) if plan.new else SetData(path, plan.head, -1)
        if plan.fits_one_multi:
            await out.writes.write([head, *create, *delete] if plan.new else [*create, head, *delete])
            return
        if plan.new:
            await out.writes.write([Create(path, UNCOMMITTED), *create])
        elif create:
            await out.writes.write(create)
        await out.writes.write([SetData(path, plan.head, -1)])  # the commit point
        if delete:
            await out.writes.write(delete)

    async def delete(self, batch_id: str, out: EventOutputs) -> None:
        """The whole journal of ``batch_id``."""
        path = batch_paths.batch(batch_id)
        if await self.reads.exists(path) is not None:
            await self._delete(batch_id, await self.reads.children(path), out)

    async def _delete(self, batch_id: str, children: list[str], out: EventOutputs) -> None:
        plan = commit.deletion(batch_id, children)
        path = batch_paths.batch(batch_id)
        deletes: list[Op] = [Delete(batch_paths.child(batch_id, n), -1) for n in plan.children]
        if plan.one_multi:
            await out.writes.write([*deletes, Delete(path, -1)])
        else:
            await out.writes.write([SetData(path, UNCOMMITTED, -1)])  # from here on, no batch
            await out.writes.write(deletes)
            await out.writes.write([Delete(path, -1)])
        self.layouts.pop(batch_id, None)
        self._generations.pop(batch_id, None)
