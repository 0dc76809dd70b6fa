"""Topic deletion (Kafka's TopicDeletionManager).

A topic queued in ``/admin/delete_topics`` whose partitions are not being reassigned (the whole
topic is checked) gets StopReplica(delete) on every replica; once every replica confirmed, the
topic's znodes (``/brokers/topics/<t>`` recursively, ``/config/topics/<t>``, the request znode)
are removed in fenced multis. Replicas on brokers that are down wait for them to return, as in
Kafka.
"""

from __future__ import annotations

import logging

from reassignd.contracts.records import TopicDeleted
from reassignd.control.protocol import ControlResponse, StopReplicaRequest
from reassignd.controller.effects.broker_requests import BrokerRequestBatch
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.effects.fenced_writes import Refused
from reassignd.controller.state.context import ControllerContext
from reassignd.stream.record_log import RecordLog
from reassignd.topic_partition import TopicPartition
from reassignd.zk import paths
from reassignd.zk.errors import NoNodeError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import Delete, Op

log = logging.getLogger(__name__)

Replica = tuple[TopicPartition, int]  # (partition, broker)


class TopicDeleter:
    def __init__(self, reads: ZkReads, ctx: ControllerContext, records: RecordLog) -> None:
        self.reads = reads
        self.ctx = ctx
        self.records = records
        self.awaiting: dict[str, set[Replica]] = {}

    def eligible(self, topic: str) -> bool:
        return topic not in self.ctx.reassigning_topics

    async def resume(self, out: EventOutputs) -> list[str]:
        """Start (or finish) the deletion of every queued topic that can go now, its requests in
        ``out``. Returns the topics whose znodes were removed."""
        ctx = self.ctx
        broker_requests = out.requests
        removed = []
        for topic in sorted(ctx.topics_to_delete):
            if topic not in ctx.assignments:
                await self._finish(topic, out)
                removed.append(topic)
                continue
            if not self.eligible(topic):
                log.info("deletion of %s waits for its reassignments to finish", topic)
                continue
            if topic not in self.awaiting:
                pending = {((topic, p), r) for p, a in ctx.assignments[topic].items() for r in a.replicas}
                self.awaiting[topic] = pending
                log.info("deleting topic %s: stopping %d replicas", topic, len(pending))
                for tp, r in pending:
                    broker_requests.add_stop_replica(r, tp, delete=True)
            if not self.awaiting[topic]:
                await self._finish(topic, out)
                removed.append(topic)
        return removed

    def confirmed(self, broker_id: int, request: StopReplicaRequest, response: ControlResponse) -> bool:
        """A StopReplica answer: replicas it deleted (no partition error) are done. True when
        some deletion may now finish."""
        if response.error_code != 0:
            return False
        failed = {(e.topic, e.partition) for e in response.partition_errors if e.error_code != 0}
        progressed = False
        for p in request.partitions:
            tp = (p.topic, p.partition)
            pending = self.awaiting.get(p.topic)
            if pending is not None and p.delete_partition and tp not in failed:
                pending.discard((tp, broker_id))
                progressed = progressed or not pending
        return progressed

    def on_broker_started(self, brokers: set[int], broker_requests: BrokerRequestBatch) -> None:
        for pending in self.awaiting.values():
            for tp, r in pending:
                if r in brokers:
                    broker_requests.add_stop_replica(r, tp, delete=True)

    async def _finish(self, topic: str, out: EventOutputs) -> None:
        """Remove the topic's znodes bottom-up (fenced), then forget it."""
        ops: list[Op] = []
        parts_path = paths.topic_partitions(topic)
        partitions = await self.reads.children(parts_path) if await self.reads.exists(parts_path) else []
        for p in partitions:
            part_path = f"{parts_path}/{p}"
            for child in await self.reads.children(part_path):
                ops.append(Delete(f"{part_path}/{child}"))
            ops.append(Delete(part_path))
        if partitions or await self.reads.exists(parts_path):
            ops.append(Delete(parts_path))
        for path in (
            paths.topic(topic),
            paths.topic_origins(topic),
            paths.config_topic(topic),
            paths.delete_topic(topic),
        ):
            if await self.reads.exists(path) is not None:
                ops.append(Delete(path))
        if ops and isinstance(refused := await out.writes.write(ops, expect=(NoNodeError,)), Refused):
            log.warning("znodes of %s changed while deleting it (%s); will retry", topic, refused.error)
            return
        self.awaiting.pop(topic, None)
        self.ctx.topics_to_delete.discard(topic)
        self.ctx.remove_topic(topic)
        log.info("topic %s deleted", topic)
        self.records.emit(TopicDeleted(topic=topic))
