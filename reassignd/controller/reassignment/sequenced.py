"""KIP-236's sequenced request protocol (docs/design.md, "KIP-236").

Clients create ``/admin/reassignment_requests/request_<seq>``; the controller applies them in
sequence order (one children watch on the parent), keeps a status node
``/admin/reassignments/<topic>/<partition>`` per in-flight partition (target, original, ``top``),
deletes each request once its effects are persisted, and deletes status nodes on completion or
cancellation. A status node replaced by a newer reassignment is re-created (a new czxid names the
new reassignment). Malformed requests, and requests naming more partitions than one request may
(``--max-partitions-per-request``), are reported and deleted without effect.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.model.requests import Source
from reassignd.controller.reads.topic_configs import TopicConfigs, read_topic_configs
from reassignd.controller.reassignment.algorithm import Reassigner
from reassignd.controller.reassignment.intake import Intake
from reassignd.controller.reassignment.validation import replica_list_error, unclean_revert_error
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.errors import NoNodeError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import Create, Delete, Op, SetData, WatchCallback

log = logging.getLogger(__name__)

REQUEST_PREFIX = "request_"


def request_order(children: list[str]) -> list[str]:
    """Request znodes in sequence order (other children are ignored)."""
    seqs = []
    for name in children:
        suffix = name.removeprefix(REQUEST_PREFIX)
        if name.startswith(REQUEST_PREFIX) and suffix.isdigit():
            seqs.append((int(suffix), name))
    return [name for _, name in sorted(seqs)]


def is_cancel(current: ReplicaAssignment, target: tuple[int, ...]) -> bool:
    """A request naming a moving partition's original replicas (as a set) cancels its move."""
    return current.is_being_reassigned and set(target) == set(current.origins)


class SequencedRequests:
    def __init__(
        self,
        reads: ZkReads,
        ctx: ControllerContext,
        reassigner: Reassigner,
        intake: Intake,
        watch_requests: Callable[[], WatchCallback | None],
        report: Callable[[str, str, str], None],
        refuse: Callable[[str, str, str], None] | None = None,
        max_partitions: int | None = None,
    ) -> None:
        self.reads = reads
        self.ctx = ctx
        self.reassigner = reassigner
        self.intake = intake
        self._watch = watch_requests
        self._report = report
        self._refuse = refuse if refuse is not None else report
        self.status: dict[TopicPartition, admin_codec.ReassignmentStatus] = {}
        self.malformed = 0
        self._max_partitions = max_partitions  # --max-partitions-per-request

    async def load_status(self, out: EventOutputs) -> None:
        """Failover: the status nodes of in-flight partitions (they survive the controller).

        Repaired before anything acts on them, each repair reported: a status node whose
        partition is no longer reassigning (its move completed or was cancelled while no
        controller ran) or does not exist is deleted; a malformed one is rewritten from the
        partition's assignment when the partition is still moving (target = TRS, original = ORS),
        deleted otherwise."""
        topics = await out.writes.children(paths.REASSIGNMENTS, None)
        ctx = self.ctx
        for topic in topics:
            for p in await self.reads.children(paths.reassignment_status_topic(topic)):
                path = f"{paths.reassignment_status_topic(topic)}/{p}"
                znode = await self.reads.get_or_none(path)
                if znode is None:
                    continue
                if not p.isdigit():
                    self._report(path, "not a partition id: deleted", "reassignment_status")
                    await self._delete(path, out)
                    continue
                tp = (topic, int(p))
                a = ctx.assignment(tp)
                try:
                    status = admin_codec.decode_reassignment_status(znode.data)
                except codec.CodecError as e:
                    if a is None or tp not in ctx.reassigning:
                        self._report(
                            path, f"{e.reason}; the partition is not moving: deleted", "reassignment_status"
                        )
                        await self._delete(path, out)
                        continue
                    status = admin_codec.ReassignmentStatus(a.target_replicas, a.origins, len(a.origins))
                    self._report(
                        path, f"{e.reason}; rewritten from the partition's assignment", "reassignment_status"
                    )
                    await out.writes.write(
                        [SetData(path, admin_codec.encode_reassignment_status(status), znode.stat.version)]
                    )
                if a is None or tp not in ctx.reassigning:
                    log.warning("status node %s is stale (the partition is not moving): deleted", path)
                    self._report(path, "stale: the partition is not moving; deleted", "reassignment_status")
                    await self._delete(path, out)
                    continue
                self.status[tp] = status
                ctx.claim_move(tp, Source.REQUEST, None)
                ctx.set_move_request_status(tp, True)

    async def on_requests(self, out: EventOutputs) -> None:
        children = await out.writes.children(paths.REASSIGNMENT_REQUESTS, self._watch())
        pending = request_order(children)
        if not pending:
            return
        if self.intake.cancel_in_place:
            log.warning("%d reassignment requests wait: /admin/reassign_cancel is in place", len(pending))
            return
        for name in pending:
            await self._apply(name, out)

    async def _apply(self, name: str, out: EventOutputs) -> None:
        path = paths.reassignment_request(name)
        request = await self._admitted(path, out)
        if request is None:
            return
        ctx = self.ctx
        accepted: dict[TopicPartition, tuple[ReplicaAssignment, tuple[int, ...]]] = {}
        for tp, target in request.assignments.items():
            current = ctx.assignment(tp)
            why = None
            if current is None or tp[0] in ctx.topics_to_delete:
                why = "the partition does not exist"
            elif (error := replica_list_error(target)) is not None:
                why = error.message
            elif tp in self.intake.legacy:
                why = "it is being reassigned through /admin/reassign_partitions (legacy); ignored"
            if why is not None or current is None:
                log.warning("%s: %s-%d %s", name, tp[0], tp[1], why)
                continue
            accepted[tp] = (current, tuple(target))
        cancels = {tp for tp, (current, target) in accepted.items() if is_cancel(current, target)}
        # naming the old replicas cancels, under the unclean-election safety rule
        refused = await self.intake.refused_reverts({tp: accepted[tp][0].origins for tp in cancels})
        moving_to = {t for t, _ in set(accepted) - cancels}
        configs = (
            await read_topic_configs(self.reads, moving_to, self._report) if moving_to else TopicConfigs()
        )
        updates: dict[TopicPartition, ReplicaAssignment] = {}
        statuses: dict[TopicPartition, admin_codec.ReassignmentStatus | None] = {}
        for tp, (current, target) in accepted.items():
            original = current.origins
            if tp in refused:
                reason = unclean_revert_error(*tp).message or "refused"
                log.warning("%s: cancel of %s-%d refused: %s", name, tp[0], tp[1], reason)
                self._report(path, f"{tp[0]}-{tp[1]} not cancelled: {reason}", "reassignment_request")
                continue
            if tp in cancels:
                updates[tp] = ReplicaAssignment(target)
                statuses[tp] = None
                continue
            top = len(original)
            if top < configs.min_insync_replicas(tp[0]):
                log.warning(
                    "%s: %s-%d ignored: its %d original replicas are fewer than min.insync.replicas",
                    name,
                    tp[0],
                    tp[1],
                    top,
                )
                continue
            updates[tp] = current.reassign_to(target)
            statuses[tp] = admin_codec.ReassignmentStatus(tuple(target), original, top)
        too_large = await self.reassigner.reassign(updates, Source.REQUEST, self.intake.now_ms(), out)
        for tp in too_large:  # the topic write would be too large: not taken
            statuses.pop(tp, None)
        for reason in dict.fromkeys(too_large.values()):
            named = sorted(tp for tp, r in too_large.items() if r == reason)
            shown = ", ".join(f"{t}-{p}" for t, p in named[:5]) + (" ..." if len(named) > 5 else "")
            log.warning("%s: %d partitions refused (%s): %s", name, len(named), shown, reason)
            self._refuse(path, f"{len(named)} partitions refused ({shown}): {reason}", "reassignment_request")
        ops: list[Op] = []
        for tp, status in statuses.items():
            status_path = paths.reassignment_status(*tp)
            if tp in self.status:
                ops.append(Delete(status_path))
            moving = (a := ctx.assignment(tp)) is not None and a.is_being_reassigned
            if status is not None and moving:
                if tp[0] not in {t for t, _ in self.status} and not await self.reads.exists(
                    paths.reassignment_status_topic(tp[0])
                ):
                    ops.append(Create(paths.reassignment_status_topic(tp[0])))
                ops.append(Create(status_path, admin_codec.encode_reassignment_status(status)))
        # the request goes once its effects are persisted: a write of its own after the status
        # nodes (one write may be split into several multis, pipelined: a later one may land even
        # when an earlier one failed — the request must never go with a status node missing)
        await out.writes.write(_dedupe_topic_creates(ops))  # no ops: only the fence checked
        await out.writes.write([Delete(path)])
        for tp, status in statuses.items():
            moving = (a := ctx.assignment(tp)) is not None and a.is_being_reassigned
            if status is not None and moving:
                self.status[tp] = status
            else:
                self.status.pop(tp, None)
            ctx.set_move_request_status(tp, status is not None and moving)
        log.info("applied %s: %d partitions", name, len(updates))

    async def _admitted(self, path: str, out: EventOutputs) -> admin_codec.ReassignmentRequest | None:
        """The request at ``path``, or None when it is gone or refused whole (reported and
        deleted without effect): malformed, or naming more partitions than one request may
        (``--max-partitions-per-request``, the door's bound for a request that comes through
        ZooKeeper, model/admission.py)."""
        znode = await self.reads.get_or_none(path)
        if znode is None:
            return None
        try:
            request = admin_codec.decode_reassignment_request(znode.data)
        except codec.CodecError as e:
            self.malformed += 1
            self._report(path, e.reason, "reassignment_request")
            await self._delete(path, out)
            return None
        if self._max_partitions is not None and len(request.assignments) > self._max_partitions:
            reason = (
                f"names {len(request.assignments)} partitions, more than the {self._max_partitions} one "
                "request may name (--max-partitions-per-request): refused, deleted without effect"
            )
            self._refuse(path, reason, "reassignment_request")
            await self._delete(path, out)
            return None
        return request

    async def after_completions(self, completed: list[TopicPartition], out: EventOutputs) -> None:
        """Status nodes of completed (or cancelled, or superseded by another path) partitions
        are deleted."""
        done = [tp for tp in completed if tp in self.status]
        if not done:
            return
        for tp in done:
            # gone already: done
            await out.writes.write([Delete(paths.reassignment_status(*tp))], expect=(NoNodeError,))
            del self.status[tp]
            self.ctx.set_move_request_status(tp, False)

    async def _delete(self, path: str, out: EventOutputs) -> None:
        await out.writes.write([Delete(path)], expect=(NoNodeError,))  # one already gone is deleted


def _dedupe_topic_creates(ops: list[Op]) -> list[Op]:
    seen: set[str] = set()
    out: list[Op] = []
    for op in ops:
        if isinstance(op, Create) and op.path in seen:
            continue
        if isinstance(op, Create):
            seen.add(op.path)
        out.append(op)
    return out
