"""Topic mutations through the controller's event queue, charged to KIP-599 quotas.

CreateTopics / CreatePartitions write the topic znode (its config znode first, always, as
Kafka's AdminZkClient does) and bring the new partitions online in the same event; DeleteTopics queues
``/admin/delete_topics/<t>`` and starts the deletion (``deletion.py``). Validation is Kafka's
(``validation.py``); only topics that pass it are charged, in request order, and only when
not ``validate_only``.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeVar

from reassignd.contracts.records import PartitionsAdded, QuotaThrottled
from reassignd.controller.effects import failures
from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.effects.fenced_writes import Refused
from reassignd.controller.model.requests import (
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    TopicOutcome,
    TopicsResult,
)
from reassignd.controller.state.assignment import ReplicaAssignment
from reassignd.controller.state.context import ControllerContext
from reassignd.controller.topics.placement import BrokerMeta
from reassignd.controller.topics.validation import (
    PartitionsCreation,
    TopicCatalog,
    TopicCreation,
    TopicDeletion,
    TopicZnodeTooLarge,
    validate_create_partitions,
    validate_create_topics,
    validate_delete_topics,
)
from reassignd.errors import EventRefused, ReassigndError, ThrottlingQuotaExceeded
from reassignd.quotas.manager import QuotaManager, response_throttle_ms
from reassignd.quotas.token_bucket import Admission
from reassignd.stream.record_log import RecordLog
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.errors import InvalidAclError, NoAuthError, NodeExistsError, NoNodeError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import Create, Op, SetData

log = logging.getLogger(__name__)

Plan = TypeVar("Plan")


class _ReplicaSets(Mapping[str, Mapping[int, Sequence[int]]]):
    """Each topic's partitions' replicas (RS), read from the context when a topic is looked up:
    validating one request costs what it names, not a copy of every partition."""

    __slots__ = ("_assignments",)

    def __init__(self, assignments: Mapping[str, Mapping[int, ReplicaAssignment]]) -> None:
        self._assignments = assignments

    def __getitem__(self, topic: str) -> Mapping[int, Sequence[int]]:
        return {p: a.replicas for p, a in self._assignments[topic].items()}

    def __iter__(self) -> Iterator[str]:
        return iter(self._assignments)

    def __len__(self) -> int:
        return len(self._assignments)

    def __contains__(self, topic: object) -> bool:
        return topic in self._assignments


def catalog_of(ctx: ControllerContext) -> TopicCatalog:
    """What validation reads of the context, during the event (nothing is copied)."""
    return TopicCatalog(
        topics=_ReplicaSets(ctx.assignments),
        brokers=tuple(BrokerMeta(b, reg.rack) for b, reg in sorted(ctx.brokers.items())),
        reassigning=ctx.reassigning_topics.keys(),
        deleting=frozenset(ctx.topics_to_delete),
    )


class TopicMutations:
    def __init__(
        self,
        reads: ZkReads,
        ctx: ControllerContext,
        records: RecordLog,
        quotas: QuotaManager,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        refuse: Callable[[str, str, str], None] | None = None,
    ) -> None:
        self.reads = reads
        self.ctx = ctx
        self.records = records
        self.quotas = quotas
        self._clock = clock
        self._rng = rng or random.Random()
        self._refuse = refuse

    def _report_oversized(self, name: str, error: ReassigndError) -> None:
        """A topic whose znode would not fit: refused (37) and reported, like an oversized move."""
        if isinstance(error, TopicZnodeTooLarge) and self._refuse is not None:
            self._refuse(paths.topic(name), error.message or error.error_name, "topic_znode_size")

    def _charge(
        self,
        user: str,
        client_id: str,
        plans: Sequence[Plan | ReassigndError],
        cost: Callable[[Plan], int],
        charge: bool,
        strict: bool = True,
    ) -> tuple[list[Plan | ReassigndError], int]:
        """Charge the valid entries in request order; rejected ones become 89 (not ``strict``:
        none is refused, the response carries the entity's throttle instead)."""
        now = self._clock()
        admissions: list[Admission] = []
        out: list[Plan | ReassigndError] = []
        permissive_ms = 0
        for plan in plans:
            if isinstance(plan, ReassigndError) or not charge:
                out.append(plan)
                continue
            if not strict:
                permissive_ms = max(permissive_ms, self.quotas.record(user, client_id, cost(plan), now))
                out.append(plan)
                continue
            admission = self.quotas.admit(user, client_id, cost(plan), now)
            admissions.append(admission)
            out.append(plan if admission.admitted else ThrottlingQuotaExceeded())
        throttle_ms = max(response_throttle_ms(admissions, now, self._clock()), permissive_ms)
        refused = sum(1 for a in admissions if not a.admitted)
        if throttle_ms > 0:
            self.records.emit(
                QuotaThrottled(user=user, client_id=client_id, throttle_time_ms=throttle_ms, refused=refused)
            )
        return out, throttle_ms

    # --- CreateTopics ----------------------------------------------------------------------------

    async def create_topics(self, request: CreateTopics, out: EventOutputs) -> tuple[TopicsResult, list[str]]:
        """Returns the result and the names actually created (for the caller to bring online)."""
        plans = validate_create_topics(request.topics, catalog_of(self.ctx), rng=self._rng)
        charged, throttle = self._charge(
            request.caller.user,
            request.caller.client_id,
            plans,
            lambda p: p.num_partitions,
            not request.validate_only,
            request.strict_quota,
        )
        created: list[str] = []
        results: list[TopicOutcome] = []
        for item in charged:
            if isinstance(item, ReassigndError):
                self._report_oversized(_name_of(request, len(results)), item)
                results.append(TopicOutcome(_name_of(request, len(results)), item.error_code, item.message))
                continue
            assert isinstance(item, TopicCreation)
            if not request.validate_only:
                refused = await self._write_topic(item, out)
                if refused is not None:  # the other topics go on
                    results.append(TopicOutcome(item.name, EventRefused.error_code, refused))
                    continue
                created.append(item.name)
            results.append(
                TopicOutcome(
                    item.name, num_partitions=item.num_partitions, replication_factor=item.replication_factor
                )
            )
        return TopicsResult(tuple(results), throttle, self._clock()), created

    async def _write_topic(self, plan: TopicCreation, out: EventOutputs) -> str | None:
        """The topic's config and topic znodes, in one multi; None, or why ZooKeeper refused them
        the same way every time (NOAUTH: another principal owns ``/config/topics`` or
        ``/brokers/topics``) — that topic is refused (UNKNOWN_SERVER_ERROR, as Kafka answers a
        ZooKeeper failure of one topic) and reported, nothing of it written."""
        ops: list[Op] = []
        # the config znode always, empty when no config is given (as Kafka's AdminZkClient): a
        # tool that reads a topic's configs finds it, and a leftover one is replaced
        config_path = paths.config_topic(plan.name)
        data = admin_codec.encode_entity_config(dict(plan.configs))
        if await self.reads.exists(config_path) is None:
            ops.append(Create(config_path, data))
        else:
            ops.append(SetData(config_path, data, -1))
        znode = codec.TopicZnode(dict(plan.assignment), topic_id=codec.new_uuid_base64())
        ops.append(Create(paths.topic(plan.name), codec.encode_topic(znode)))
        refusals = (NodeExistsError, NoAuthError, InvalidAclError)
        written = await out.writes.write(ops, expect=(*refusals, NoNodeError))
        if isinstance(written, Refused) and isinstance(written.error, NoNodeError):
            # a parent deleted outside the controller: created again (as Kafka's createRecursive),
            # then the topic once more
            recreated = await out.writes.ensure_paths([paths.CONFIG_TOPICS, paths.BROKER_TOPICS])
            log.warning(
                "re-created %s (deleted outside the controller) to create topic %s", recreated, plan.name
            )
            written = await out.writes.write(ops, expect=refusals)
        if isinstance(written, Refused) and not isinstance(written.error, NodeExistsError):
            refusal = failures.describe(written.error)
            reason = f"topic {plan.name} not created: {refusal.reason}"
            if self._refuse is not None:
                self._refuse(refusal.path or paths.topic(plan.name), reason, "topic_create")
            return reason
        if isinstance(written, Refused):
            log.warning("topic %s appeared concurrently; not created again", plan.name)
            return None
        log.info("created topic %s: %d partitions", plan.name, plan.num_partitions)
        return None

    # --- CreatePartitions -------------------------------------------------------------------------

    async def create_partitions(
        self, request: CreatePartitions, out: EventOutputs
    ) -> tuple[TopicsResult, dict[str, list[int]]]:
        plans = validate_create_partitions(request.topics, catalog_of(self.ctx), rng=self._rng)
        charged, throttle = self._charge(
            request.caller.user,
            request.caller.client_id,
            plans,
            lambda p: len(p.new_assignment),
            not request.validate_only,
            request.strict_quota,
        )
        added: dict[str, list[int]] = {}
        results: list[TopicOutcome] = []
        for i, item in enumerate(charged):
            name = request.topics[i].name
            if isinstance(item, ReassigndError):
                self._report_oversized(name, item)
                results.append(TopicOutcome(name, item.error_code, item.message))
                continue
            assert isinstance(item, PartitionsCreation)
            if not request.validate_only:
                await out.writes.write_assignments(
                    {(name, p): ReplicaAssignment(tuple(r)) for p, r in item.new_assignment.items()}
                )
                added[name] = sorted(item.new_assignment)
                self.records.emit(PartitionsAdded(topic=name, partitions=tuple(added[name])))
            results.append(TopicOutcome(name))
        return TopicsResult(tuple(results), throttle, self._clock()), added

    # --- DeleteTopics -----------------------------------------------------------------------------

    async def delete_topics(self, request: DeleteTopics, out: EventOutputs) -> tuple[TopicsResult, list[str]]:
        plans = validate_delete_topics(request.names, catalog_of(self.ctx))
        charged, throttle = self._charge(
            request.caller.user,
            request.caller.client_id,
            plans,
            lambda p: len(self.ctx.assignments.get(p.name, {})),
            True,
            request.strict_quota,
        )
        queued: list[str] = []
        results: list[TopicOutcome] = []
        for name, item in zip(request.names, charged, strict=True):
            if isinstance(item, ReassigndError):
                results.append(TopicOutcome(name, item.error_code, item.message))
                continue
            assert isinstance(item, TopicDeletion)
            if not item.already_queued:
                # one queued meanwhile (another tool) is queued all the same
                await out.writes.write([Create(paths.delete_topic(name))], expect=(NodeExistsError,))
            queued.append(name)
            results.append(TopicOutcome(name))
        return TopicsResult(tuple(results), throttle, self._clock()), queued


def _name_of(request: CreateTopics, index: int) -> str:
    return request.topics[index].name
