"""Every partition's state as the control channel carries it, kept encoded for one active term.

An event's requests name the partitions it changed, and a broker that registers gets every
partition's state in its UpdateMetadata: both take each state's bytes from here, encoded once
after the partition's last change and never again per broker or per event (100,000 partitions
to a new broker: the bytes joined, no state built). The context marks what changed
(``ControllerContext.wire_changed``); :meth:`WireStates.refresh` forgets those encodings, and the
next reader encodes them anew. There is one per context (``ActiveParts.wire``): it alone takes
the context's marks.
"""

from __future__ import annotations

from collections.abc import Iterable

from reassignd.concurrency import pace
from reassignd.control.protocol import WirePartitionState, encode_state
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext, LeaderIsr
from reassignd.topic_partition import TopicPartition


def wire_state(
    tp: TopicPartition, li: LeaderIsr, a: ReplicaAssignment, *, is_new: bool
) -> WirePartitionState:
    s = li.state
    return WirePartitionState(
        topic=tp[0],
        partition=tp[1],
        controller_epoch=s.controller_epoch,
        leader=s.leader,
        leader_epoch=s.leader_epoch,
        isr=s.isr,
        partition_epoch=li.version,
        replicas=a.replicas,
        adding_replicas=a.adding,
        removing_replicas=a.removing,
        is_new=is_new,
    )


class WireStates:
    __slots__ = ("_ctx", "_encoded", "_pending")

    def __init__(self, ctx: ControllerContext) -> None:
        self._ctx = ctx
        # partition -> its state's bytes (not new), for partitions with a state and an assignment
        self._encoded: dict[TopicPartition, bytes] = {}
        # partitions that may have a state not encoded yet
        self._pending: set[TopicPartition] = set(ctx.states)
        ctx.wire_changed.clear()

    def refresh(self) -> None:
        """Forget the encodings of the partitions that changed since the last refresh (every
        reader below assumes one was made after the context's last change)."""
        changed = self._ctx.wire_changed
        if not changed:
            return
        encoded = self._encoded
        for tp in changed:
            encoded.pop(tp, None)
        self._pending |= changed
        changed.clear()

    def get(self, tp: TopicPartition) -> bytes | None:
        """The partition's state (not new); None without a state or an assignment."""
        found = self._encoded.get(tp)
        if found is None:
            found = self._encode(tp)
        return found

    async def encode_all(self, tps: Iterable[TopicPartition]) -> None:
        """Encode those of ``tps`` not encoded yet, yielding to the loop between slices."""
        encoded, encode = self._encoded, self._encode
        for i, tp in enumerate(tps):
            if i % 500 == 0:
                await pace()
            if tp not in encoded:
                encode(tp)

    async def encode_pending(self) -> None:
        """Encode every state not encoded yet (what ``everything`` would), in slices that yield."""
        await self.encode_all(list(self._pending))

    def new(self, tp: TopicPartition) -> bytes | None:
        """The partition's state marked new (built now, not kept)."""
        ctx = self._ctx
        a = ctx.assignment(tp)
        li = ctx.states.get(tp)
        return None if a is None or li is None else encode_state(wire_state(tp, li, a, is_new=True))

    def everything(self) -> dict[TopicPartition, bytes]:
        """Every partition with a state and an assignment, encoded (the kept mapping itself:
        read it, do not change it)."""
        pending = self._pending
        if pending:
            encode = self._encode
            for tp in list(pending):
                encode(tp)
        return self._encoded

    def _encode(self, tp: TopicPartition) -> bytes | None:
        ctx = self._ctx
        a = ctx.assignments.get(tp[0], _NO_PARTITIONS).get(tp[1])
        li = ctx.states.get(tp)
        self._pending.discard(tp)
        if a is None or li is None:
            self._encoded.pop(tp, None)
            return None
        encoded = self._encoded[tp] = encode_state(wire_state(tp, li, a, is_new=False))
        return encoded


_NO_PARTITIONS: dict[int, ReplicaAssignment] = {}
