"""ApiVersions, Metadata and DescribeCluster: what a client needs to find its way.

Every live broker is listed at its own port of the listener when it has one
(``--kafka-broker-ports``), else at the listener's advertised address (a client opens one
connection per node id; they all reach this listener), and ``controller_id`` is a listed id, so
controller requests come here. A standby lists one node, the active instance (its controller id at its
Kafka listener, read from ``/controller``), so clients move there by themselves; the active
lists its own id when no broker is live yet, so clients can still bootstrap.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import DescribeClusterResponse
from kafka.protocol.metadata import ApiVersionsResponse, MetadataResponse

from reassignd.controller.model.snapshot import ClusterSnapshot, TopicView
from reassignd.errors import ReassigndError
from reassignd.kafka_listener import protocol
from reassignd.kafka_listener.context import Address, Listener, RequestContext
from reassignd.kafka_listener.protocol import api_versions_table
from reassignd.options import split_host_port

UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
INVALID_REQUEST = 42
UNKNOWN_TOPIC_ID = 100
ZERO_UUID = uuid.UUID(int=0)

Broker = MetadataResponse.MetadataResponseBroker
Topic = MetadataResponse.MetadataResponseTopic
Partition = MetadataResponse.MetadataResponseTopic.MetadataResponsePartition


@dataclass(frozen=True, slots=True)
class Node:
    node_id: int
    address: Address
    rack: str | None


def topic_uuid(topic_id: str | None) -> uuid.UUID:
    """Kafka's 22-character base64url topic id as a UUID (zero when absent or malformed)."""
    if not topic_id:
        return ZERO_UUID
    try:
        raw = base64.urlsafe_b64decode(topic_id + "==")
    except (binascii.Error, ValueError):
        return ZERO_UUID
    return uuid.UUID(bytes=raw) if len(raw) == 16 else ZERO_UUID


STANDBY_BROKERS_TTL_S = 1.0  # a standby re-reads /brokers/ids at most this often


async def registered_brokers(listener: Listener) -> tuple[int, ...]:
    """A standby's view of ``/brokers/ids``: read at most once a ``STANDBY_BROKERS_TTL_S``,
    concurrent requests sharing one read; the last list read when a read fails."""
    kept = listener.standby_brokers
    if kept is not None and time.monotonic() - kept[0] < STANDBY_BROKERS_TTL_S:
        return kept[1]
    reading = listener.standby_brokers_reading
    if reading is None:

        async def read() -> tuple[int, ...]:
            ids = tuple(await listener.api.registered_brokers())
            listener.standby_brokers = (time.monotonic(), ids)
            return ids

        reading = asyncio.ensure_future(read())
        listener.standby_brokers_reading = reading

        def done(task: asyncio.Future[tuple[int, ...]]) -> None:
            if listener.standby_brokers_reading is task:
                listener.standby_brokers_reading = None
            if not task.cancelled():
                task.exception()  # retrieved here: the waiters see it

        reading.add_done_callback(done)
    try:
        return await asyncio.shield(reading)
    except ReassigndError:
        if kept is not None:
            return kept[1]
        raise


async def nodes(snapshot: ClusterSnapshot, listener: Listener) -> tuple[list[Node], int]:
    """The nodes to advertise and the controller id among them. A standby lists the registered
    brokers at the active instance's listener with the id the active one names (the lowest), so
    a client that bootstrapped here keeps one consistent view."""
    if snapshot.active:
        if listener.follow_brokers is not None:  # each broker's port open before it is listed
            await listener.follow_brokers(snapshot)
        brokers = [
            Node(b.broker_id, listener.broker_address(b.broker_id), b.rack) for b in snapshot.brokers.values()
        ]
        if not brokers:
            return [Node(listener.controller_id, listener.advertised, None)], listener.controller_id
        return brokers, brokers[0].node_id
    active = snapshot.active_controller
    if active is not None and active.kafka:
        try:
            host, port = split_host_port(active.kafka)
        except ValueError:
            pass
        else:
            ids = await registered_brokers(listener)
            if not ids:
                return [Node(active.controller_id, Address(host, port), None)], active.controller_id
            return [Node(b, Address(host, port), None) for b in ids], ids[0]
    return [Node(listener.controller_id, listener.advertised, None)], listener.controller_id


# --- ApiVersions ----------------------------------------------------------------------------------


async def api_versions(ctx: RequestContext, request: Any) -> Any:
    return ApiVersionsResponse(error_code=0, api_keys=api_versions_table(), throttle_time_ms=0)


# --- Metadata -------------------------------------------------------------------------------------


def _partition(p: Any, live: frozenset[int]) -> Any:
    leader = p.leader if p.leader in live else -1
    return Partition(
        error_code=0 if leader >= 0 else LEADER_NOT_AVAILABLE,
        partition_index=p.partition,
        leader_id=leader,
        leader_epoch=p.leader_epoch,
        replica_nodes=list(p.replicas),
        isr_nodes=list(p.isr),
        offline_replicas=[r for r in p.replicas if r not in live],
    )


def _topic(view: TopicView, live: frozenset[int]) -> Any:
    return Topic(
        error_code=0,
        name=view.name,
        topic_id=topic_uuid(view.topic_id),
        is_internal=view.name.startswith("__"),
        partitions=[_partition(p, live) for p in view.partitions],
        authorized_operations=None,
    )


def _missing(name: str | None, code: int, topic_id: uuid.UUID = ZERO_UUID) -> Any:
    return Topic(
        error_code=code,
        name=name,
        topic_id=topic_id,
        is_internal=False,
        partitions=[],
        authorized_operations=None,
    )


def distinct_topics(requested: Iterable[Any]) -> list[Any]:
    """The topics a Metadata request names, each once (by name, or by id when the name is null),
    in the order first named: Kafka answers a set, whatever the repetitions."""
    seen: dict[object, Any] = {}
    for wanted in requested:
        key: object = (
            wanted.name if wanted.name is not None else getattr(wanted, "topic_id", None) or ZERO_UUID
        )
        seen.setdefault(key, wanted)
    return list(seen.values())


def topic_ids(listener: Listener, topics: Mapping[str, TopicView]) -> dict[uuid.UUID, str]:
    """The topics by id, built once per published topics map."""
    kept = listener.topic_ids
    if kept is not None and kept[0] is topics:
        return kept[1]
    by_id = {topic_uuid(v.topic_id): v.name for v in topics.values()}
    listener.topic_ids = (topics, by_id)
    return by_id


def resolve(topics: Mapping[str, TopicView], by_id: Mapping[uuid.UUID, str], wanted: Any) -> TopicView | None:
    if wanted.name is not None:
        return topics.get(wanted.name)
    name = by_id.get(getattr(wanted, "topic_id", None) or ZERO_UUID)
    return None if name is None else topics.get(name)


def answer_cost(snapshot: ClusterSnapshot, by_id: Mapping[uuid.UUID, str], wanted: list[Any] | None) -> int:
    """What building a Metadata answer costs: one per partition and one per topic entry."""
    if wanted is None:
        return snapshot.partition_count + len(snapshot.topics)
    cost = len(wanted)
    for w in wanted:
        view = resolve(snapshot.topics, by_id, w)
        if view is not None:
            cost += len(view.partitions)
    return cost


def metadata_topics(
    snapshot: ClusterSnapshot, by_id: Mapping[uuid.UUID, str], wanted: list[Any] | None
) -> list[Any]:
    """Every topic (``wanted`` None), or the distinct ones named (by name, or by id from v10).
    A request naming more distinct topics than ``max(MAX_METADATA_TOPICS, topics in the
    cluster)`` is answered 42 INVALID_REQUEST on each of them."""
    live = frozenset(snapshot.brokers)
    topics = snapshot.topics
    if wanted is None:
        return [_topic(topics[name], live) for name in sorted(topics)]
    if len(wanted) > max(MAX_METADATA_TOPICS, len(topics)):
        return [_missing(w.name, INVALID_REQUEST, getattr(w, "topic_id", None) or ZERO_UUID) for w in wanted]
    out = []
    for w in wanted:
        view = resolve(topics, by_id, w)
        if view is not None:
            out.append(_topic(view, live))
        elif w.name is None:
            out.append(_missing(None, UNKNOWN_TOPIC_ID, getattr(w, "topic_id", None) or ZERO_UUID))
        else:  # a standby knows no topic: retriable there, unknown on the active
            out.append(
                _missing(w.name, UNKNOWN_TOPIC_OR_PARTITION if snapshot.active else LEADER_NOT_AVAILABLE)
            )
    return out


MAX_METADATA_TOPICS = 10_000  # distinct topics one request may name (beyond the cluster's count)
CACHED_UP_TO_TOPICS = 1_000  # answers naming more are shared while built, not kept
IN_A_THREAD_FROM_COST = 2_000  # partitions + entries: a bigger answer is built off the event loop


async def metadata(ctx: RequestContext, request: Any) -> Any:
    """Answers are cached encoded, per version and distinct topics asked, for as long as the
    snapshot's topics, the nodes and the cluster id stay the same (any topic change publishes
    new topics). The work is bounded by what the answer covers, not by what the request repeats:
    the topics named are de-duplicated, and an answer covering many partitions is built in a
    worker thread (the snapshot is immutable), concurrent requests for it sharing one build, so
    the controller's event loop keeps running meanwhile."""
    snapshot = ctx.api.snapshot()
    node_list, controller_id = await nodes(snapshot, ctx.listener)
    requested = request.topics
    if ctx.version == 0 and not requested:
        requested = None  # v0: an empty list means every topic
    wanted = None if requested is None else distinct_topics(requested)
    cluster_id = await ctx.api.cluster_id()
    by_id = (
        topic_ids(ctx.listener, snapshot.topics)
        if wanted is not None and any(w.name is None for w in wanted)
        else {}
    )
    names = None if wanted is None else tuple(w.name if w.name is not None else w.topic_id for w in wanted)
    key = (ctx.version, names, tuple(node_list), controller_id, cluster_id, snapshot.active)
    cacheable = wanted is None or len(wanted) <= CACHED_UP_TO_TOPICS
    cache = ctx.listener.metadata_cache
    hit = cache.get(key, snapshot.topics) if cacheable else None
    if hit is not None:
        return protocol.Encoded(hit)

    def build() -> bytes:
        response = _metadata_response(snapshot, node_list, controller_id, cluster_id, by_id, wanted)
        return protocol.encode_response(response, ctx.version, 0)

    if answer_cost(snapshot, by_id, wanted) < IN_A_THREAD_FROM_COST:
        frame = build()
    else:  # concurrent requests for the same big answer share one build
        building = ctx.listener.metadata_building
        found = building.get(key)
        if found is not None and found[0] is snapshot.topics:
            pending = found[1]
        else:
            pending = asyncio.get_running_loop().create_task(
                asyncio.to_thread(build), name="kafka-metadata-build"
            )
            building[key] = (snapshot.topics, pending)
            pending.add_done_callback(
                lambda done: building.pop(key, None) if building.get(key, (None, None))[1] is done else None
            )
        frame = await asyncio.shield(pending)
    if cacheable:
        cache.put(key, snapshot.topics, frame)
    return protocol.Encoded(frame)


def _metadata_response(
    snapshot: ClusterSnapshot,
    node_list: list[Node],
    controller_id: int,
    cluster_id: str | None,
    by_id: Mapping[uuid.UUID, str],
    wanted: list[Any] | None,
) -> Any:
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=[
            Broker(node_id=n.node_id, host=n.address.host, port=n.address.port, rack=n.rack)
            for n in node_list
        ],
        cluster_id=cluster_id,
        controller_id=controller_id,
        topics=metadata_topics(snapshot, by_id, wanted),
        authorized_operations=None,
        error_code=0,
    )


def metadata_refusal(request: Any, version: int, code: int, message: str) -> Any:
    """Each distinct topic named answered ``code`` (Metadata has no message field)."""
    requested = [] if request.topics is None else distinct_topics(request.topics)
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=[],
        cluster_id=None,
        controller_id=-1,
        topics=[_missing(t.name, code, getattr(t, "topic_id", None) or ZERO_UUID) for t in requested],
        authorized_operations=None,
        error_code=0,
    )


def api_versions_refusal(request: Any, version: int, code: int, message: str) -> Any:
    return ApiVersionsResponse(error_code=code, api_keys=api_versions_table(), throttle_time_ms=0)


# --- DescribeCluster ------------------------------------------------------------------------------


async def describe_cluster(ctx: RequestContext, request: Any) -> Any:
    snapshot = ctx.api.snapshot()
    node_list, controller_id = await nodes(snapshot, ctx.listener)
    Described = DescribeClusterResponse.DescribeClusterBroker
    return DescribeClusterResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        endpoint_type=1,
        cluster_id=await ctx.api.cluster_id() or "",
        controller_id=controller_id,
        brokers=[
            Described(broker_id=n.node_id, host=n.address.host, port=n.address.port, rack=n.rack)
            for n in node_list
        ],
        authorized_operations=None,
    )


def describe_cluster_refusal(request: Any, version: int, code: int, message: str) -> Any:
    return DescribeClusterResponse(
        throttle_time_ms=0,
        error_code=code,
        error_message=message,
        endpoint_type=1,
        cluster_id="",
        controller_id=-1,
        brokers=[],
        authorized_operations=None,
    )
