"""ApiVersions, Metadata and DescribeCluster: what a client needs to find its way.

Every live broker is listed at the listener's advertised address (a client opens one connection
per node id; they all reach this listener), and ``controller_id`` is a listed id, so controller
requests come here. A standby lists one node, the active instance (its controller id at its
Kafka listener, read from ``/controller``), so clients move there by themselves; the active
lists its own id when no broker is live yet, so clients can still bootstrap.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import DescribeClusterResponse
from kafka.protocol.metadata import ApiVersionsResponse, MetadataResponse

from reassignd.controller.model.snapshot import ClusterSnapshot, TopicView
from reassignd.kafka_listener import protocol
from reassignd.kafka_listener.context import Address, Listener, RequestContext
from reassignd.kafka_listener.protocol import api_versions_table
from reassignd.options import split_host_port

UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
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


async def nodes(snapshot: ClusterSnapshot, listener: Listener) -> tuple[list[Node], int]:
    """The nodes to advertise and the controller id among them. A standby lists the registered
    brokers at the active instance's listener with the id the active one names (the lowest), so
    a client that bootstrapped here keeps one consistent view."""
    if snapshot.active:
        brokers = [Node(b.broker_id, listener.advertised, b.rack) for b in snapshot.brokers.values()]
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
            ids = await listener.api.registered_brokers()
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


def metadata_topics(snapshot: ClusterSnapshot, requested: Iterable[Any] | None) -> list[Any]:
    """Every topic (``requested`` None), or the ones named (by name, or by id from v10)."""
    live = frozenset(snapshot.brokers)
    topics = snapshot.topics
    if requested is None:
        return [_topic(topics[name], live) for name in sorted(topics)]
    out = []
    by_id: dict[uuid.UUID, TopicView] | None = None
    for wanted in requested:
        name = wanted.name
        if name is None:
            topic_id = getattr(wanted, "topic_id", None) or ZERO_UUID
            if by_id is None:
                by_id = {topic_uuid(v.topic_id): v for v in topics.values()}
            found = by_id.get(topic_id)
            out.append(_topic(found, live) if found else _missing(None, UNKNOWN_TOPIC_ID, topic_id))
            continue
        view = topics.get(name)
        if view is not None:
            out.append(_topic(view, live))
        else:  # a standby knows no topic: retriable there, unknown on the active
            out.append(
                _missing(name, UNKNOWN_TOPIC_OR_PARTITION if snapshot.active else LEADER_NOT_AVAILABLE)
            )
    return out


CACHE_ENTRIES = 4096
IN_A_THREAD_FROM_PARTITIONS = 10_000  # a bigger answer is built off the event loop


async def metadata(ctx: RequestContext, request: Any) -> Any:
    """Answers are cached encoded, per version and topics asked, for as long as the snapshot's
    topics, the nodes and the cluster id stay the same (any topic change publishes new topics);
    one covering many partitions is built in a worker thread (the snapshot is immutable) so the
    controller's event loop keeps running meanwhile."""
    snapshot = ctx.api.snapshot()
    node_list, controller_id = await nodes(snapshot, ctx.listener)
    requested = request.topics
    if ctx.version == 0 and not requested:
        requested = None  # v0: an empty list means every topic
    cluster_id = await ctx.api.cluster_id()
    names = None if requested is None else tuple(t.name for t in requested)
    cacheable = names is None or all(n is not None for n in names)
    key = (ctx.version, names, tuple(node_list), controller_id, cluster_id, snapshot.active)
    cache = ctx.listener.metadata_cache
    hit = cache.get(key) if cacheable else None
    if hit is not None and hit[0] is snapshot.topics:
        cache.move_to_end(key)
        return protocol.Encoded(hit[1])

    def build() -> bytes:
        response = _metadata_response(snapshot, node_list, controller_id, cluster_id, requested)
        return protocol.encode_response(response, ctx.version, 0)

    size = snapshot.partition_count if requested is None else len(requested)
    if size < IN_A_THREAD_FROM_PARTITIONS or not cacheable:
        frame = build() if size < IN_A_THREAD_FROM_PARTITIONS else await asyncio.to_thread(build)
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
        cache[key] = (snapshot.topics, frame)
        cache.move_to_end(key)
        while len(cache) > CACHE_ENTRIES:
            cache.popitem(last=False)
    return protocol.Encoded(frame)


def _metadata_response(
    snapshot: ClusterSnapshot,
    node_list: list[Node],
    controller_id: int,
    cluster_id: str | None,
    requested: Iterable[Any] | None,
) -> Any:
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=[
            Broker(node_id=n.node_id, host=n.address.host, port=n.address.port, rack=n.rack)
            for n in node_list
        ],
        cluster_id=cluster_id,
        controller_id=controller_id,
        topics=metadata_topics(snapshot, requested),
        authorized_operations=None,
        error_code=0,
    )


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
