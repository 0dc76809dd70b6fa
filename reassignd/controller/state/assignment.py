"""Kafka's ReplicaAssignment (KIP-455): RS, AR, RR and what follows from them. Pure.

RS is the full replica set, AR the adding and RR the removing replicas; ORS = RS − AR and
TRS = RS − RR, both in RS order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec


def _distinct(replicas: Iterable[int]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(replicas))


class ReplicaAssignment(msgspec.Struct, frozen=True, gc=False):
    """A msgspec struct: a failover builds one per partition (0.2 µs, a frozen dataclass 1 µs)."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @staticmethod
    def of(
        replicas: Sequence[int], adding: Sequence[int] = (), removing: Sequence[int] = ()
    ) -> ReplicaAssignment:
        return ReplicaAssignment(tuple(replicas), tuple(adding), tuple(removing))

    @property
    def origins(self) -> tuple[int, ...]:
        """ORS = RS − AR (Kafka's ``originReplicas``; a Move's ``origins`` keep their order)."""
        if not self.adding:
            return self.replicas
        adding = set(self.adding)
        return tuple(r for r in self.replicas if r not in adding)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """TRS = RS − RR."""
        if not self.removing:
            return self.replicas
        removing = set(self.removing)
        return tuple(r for r in self.replicas if r not in removing)

    @property
    def is_being_reassigned(self) -> bool:
        return bool(self.adding or self.removing)

    def reassign_to(self, target: Sequence[int]) -> ReplicaAssignment:
        """The assignment that moves to ``target``, always relative to ORS (Kafka's rule):
        RS = distinct(TRS ++ ORS), AR = RS − ORS, RR = RS − TRS."""
        ors = self.origins
        trs = _distinct(target)
        rs = _distinct((*trs, *ors))
        in_ors, in_trs = set(ors), set(trs)  # linear in the list lengths, whatever a client sends
        return ReplicaAssignment(
            rs,
            tuple(r for r in rs if r not in in_ors),
            tuple(r for r in rs if r not in in_trs),
        )

    def revert(self) -> ReplicaAssignment:
        """Cancel: back to the original replicas, in RS − AR order (Kafka's limit: the order may
        differ from the one before the move)."""
        return ReplicaAssignment(self.origins)

    def stop(self, isr: Iterable[int]) -> ReplicaAssignment:
        """Stop mode: keep the adding replicas already in the ISR: ORS + (AR ∩ ISR)."""
        in_sync = set(isr)
        return ReplicaAssignment(self.origins + tuple(r for r in self.adding if r in in_sync))

    def completed(self) -> ReplicaAssignment:
        """The assignment once the move is done: RS = TRS, no AR/RR."""
        return ReplicaAssignment(self.target_replicas)

    def is_complete(self, isr: Iterable[int]) -> bool:
        """TRS ⊆ ISR (a partition that is not moving is complete at once)."""
        if not self.is_being_reassigned:
            return True
        in_sync = set(isr)
        return all(r in in_sync for r in self.target_replicas)
