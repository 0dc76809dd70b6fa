"""DescribeTopicPartitions (75, KIP-966): topics described a page at a time, as newer tools do
instead of one Metadata answer covering every partition.

Kafka's rules: the topics named (or every topic, when none is named) in name order, starting at
the cursor's topic and partition; at most ``ResponsePartitionLimit`` partitions in an answer,
never more than 2,000 (Kafka's ``max.request.partition.size.limit``) and never fewer than one;
when the page ends inside a topic, or before a topic still to describe, ``NextCursor`` names
where the next page starts. A topic named that does not exist answers 3 (17 for a name that
cannot be a topic; a standby, which knows no topic, answers 5 so the client retries at the active
instance); describing every topic leaves such errors out. A cursor with a negative partition,
or naming a topic the request does not, is 42 INVALID_REQUEST on every topic named.

The work of one request is bounded by its answer: the topic names are sorted once per published
topics map (kept on the listener), a page starts by binary search, and a topic's partitions are
sliced, never walked from the start. Pure but for the handler.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin import DescribeTopicPartitionsResponse

from reassignd.controller.model.snapshot import TopicView
from reassignd.int_limits import INT32_MIN
from reassignd.kafka_listener.cluster import ZERO_UUID, topic_uuid
from reassignd.kafka_listener.context import Listener, RequestContext
from reassignd.topic_partition import topic_name_problem

UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
INVALID_TOPIC_EXCEPTION = 17
INVALID_REQUEST = 42
MAX_RESPONSE_PARTITIONS = 2000  # Kafka's max.request.partition.size.limit (and the request's default)
NO_AUTHORIZED_OPERATIONS = INT32_MIN  # the schema's default: not computed

Topic = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
Partition = Topic.DescribeTopicPartitionsResponsePartition
Cursor = DescribeTopicPartitionsResponse.Cursor


@dataclass(frozen=True, slots=True)
class Page:
    topics: list[Any]  # DescribeTopicPartitionsResponseTopic
    next_cursor: tuple[str, int] | None


def response_limit(requested: int) -> int:
    return max(1, min(MAX_RESPONSE_PARTITIONS, requested))


def cursor_problem(named: Sequence[str] | None, cursor: tuple[str, int] | None) -> str | None:
    if cursor is None:
        return None
    if cursor[1] < 0:
        return "Cursor partition index must not be negative."
    if named is not None and cursor[0] not in named:
        return "The topic in cursor is not on the list of topics request"
    return None


def _partition(p: Any, live: frozenset[int]) -> Any:
    leader = p.leader if p.leader in live else -1
    return Partition(
        error_code=0 if leader >= 0 else LEADER_NOT_AVAILABLE,
        partition_index=p.partition,
        leader_id=leader,
        leader_epoch=p.leader_epoch,
        replica_nodes=list(p.replicas),
        isr_nodes=list(p.isr),
        eligible_leader_replicas=[],
        last_known_elr=[],
        offline_replicas=[r for r in p.replicas if r not in live],
    )


def _topic(name: str, code: int, view: TopicView | None, partitions: list[Any]) -> Any:
    return Topic(
        error_code=code,
        name=name,
        topic_id=topic_uuid(view.topic_id) if view is not None else ZERO_UUID,
        is_internal=name.startswith("__"),
        partitions=partitions,
        topic_authorized_operations=NO_AUTHORIZED_OPERATIONS,
    )


def _missing_code(name: str, active: bool) -> int:
    if topic_name_problem(name) is not None:
        return INVALID_TOPIC_EXCEPTION
    return UNKNOWN_TOPIC_OR_PARTITION if active else LEADER_NOT_AVAILABLE


def describe_page(
    topics: Mapping[str, TopicView],
    sorted_names: Sequence[str],
    named: Sequence[str] | None,
    cursor: tuple[str, int] | None,
    limit: int,
    live: frozenset[int],
    active: bool = True,
) -> Page:
    """One page. ``sorted_names``: every topic's name, sorted (used when ``named`` is None);
    ``named``: the topics the request names (None: every topic); ``limit`` as
    :func:`response_limit` made it. The cursor is assumed checked (:func:`cursor_problem`)."""
    start_name, start_partition = cursor if cursor is not None else ("", 0)
    if named is None:
        names: Sequence[str] = sorted_names
        first = bisect.bisect_left(sorted_names, start_name)
        report_missing = False
    else:
        names = sorted(set(named))
        first = bisect.bisect_left(names, start_name)
        report_missing = True
    remaining = limit
    out: list[Any] = []
    for i in range(first, len(names)):
        name = names[i]
        if remaining == 0:  # the page is full: the next one starts at this topic
            return Page(out, (name, 0))
        view = topics.get(name)
        if view is None:
            if report_missing:
                out.append(_topic(name, _missing_code(name, active), None, []))
            continue
        start = start_partition if name == start_name else 0
        at = bisect.bisect_left(view.partitions, start, key=lambda p: p.partition)
        chosen = view.partitions[at : at + remaining]
        out.append(_topic(name, 0, view, [_partition(p, live) for p in chosen]))
        remaining -= len(chosen)
        if at + len(chosen) < len(view.partitions):  # the page ends inside this topic
            return Page(out, (name, view.partitions[at + len(chosen)].partition))
    return Page(out, None)


def sorted_topic_names(listener: Listener, topics: Mapping[str, TopicView]) -> list[str]:
    """Every topic's name in order, sorted once per published topics map."""
    kept = listener.sorted_topic_names
    if kept is not None and kept[0] is topics:
        return kept[1]
    names = sorted(topics)
    listener.sorted_topic_names = (topics, names)
    return names


def _request_cursor(request: Any) -> tuple[str, int] | None:
    c = request.cursor
    return None if c is None else (c.topic_name, c.partition_index)


def page_response(page: Page) -> Any:
    cursor = page.next_cursor
    return DescribeTopicPartitionsResponse(
        throttle_time_ms=0,
        topics=page.topics,
        next_cursor=None if cursor is None else Cursor(topic_name=cursor[0], partition_index=cursor[1]),
    )


async def describe_topic_partitions(ctx: RequestContext, request: Any) -> Any:
    named = [t.name for t in request.topics] or None  # none named: every topic
    cursor = _request_cursor(request)
    problem = cursor_problem(named, cursor)
    if problem is not None:
        return describe_topic_partitions_refusal(request, ctx.version, INVALID_REQUEST, problem)
    snapshot = ctx.api.snapshot()
    names = sorted_topic_names(ctx.listener, snapshot.topics) if named is None else []
    page = describe_page(
        snapshot.topics,
        names,
        named,
        cursor,
        response_limit(request.response_partition_limit),
        frozenset(snapshot.brokers),
        snapshot.active,
    )
    return page_response(page)


def describe_topic_partitions_refusal(request: Any, version: int, code: int, message: str) -> Any:
    """Kafka's error answer: every topic named, once, with the error (the schema has no message)."""
    names = dict.fromkeys(t.name for t in request.topics)
    return page_response(Page([_topic(n, code, None, []) for n in names], None))
