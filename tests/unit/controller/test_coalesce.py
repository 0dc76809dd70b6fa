"""Coalescing queued events (``reassignd.controller.runtime.coalesce``) over a real event queue: watch
notifications taken wherever they wait, API reassignment requests group-committed only while
handling them together is handling them in order."""

from __future__ import annotations

import asyncio

import pytest

from reassignd.controller.instance.event_queue import ControllerEventQueue
from reassignd.controller.instance.events import (
    ApiPartitionReassignment,
    BrokerModified,
    BrokersChanged,
    ControllerEvent,
    CreateTopicsRequested,
    IsrChangeNotified,
    PartitionsModified,
    PartitionStateChanged,
    TopicsChanged,
    ZkPartitionReassignment,
)
from reassignd.controller.model.requests import AlterReassignments, CancelMode, CreateTopics
from reassignd.controller.runtime.coalesce import coalesce
from reassignd.topic_partition import TopicPartition


def alter(*tps: TopicPartition, mode: CancelMode = CancelMode.CANCEL) -> ApiPartitionReassignment:
    reply = asyncio.get_running_loop().create_future()
    return ApiPartitionReassignment(AlterReassignments(tuple((tp, (1, 2)) for tp in tps), mode), reply)


def queued(*events: ControllerEvent) -> ControllerEventQueue[ControllerEvent]:
    queue: ControllerEventQueue[ControllerEvent] = ControllerEventQueue()
    for e in events:
        queue.put(e)
    return queue


def rest(queue: ControllerEventQueue[ControllerEvent]) -> list[ControllerEvent]:
    return queue.clear()


async def test_take_selects_leaves_and_stops_and_counts_queue_times() -> None:
    now = [10.0]
    queue: ControllerEventQueue[int] = ControllerEventQueue(lambda: now[0])
    for n in (1, 2, 3, 4, 5, 6):
        queue.put(n)
    now[0] += 0.5
    taken = queue.take(lambda n: None if n == 5 else n % 2 == 0)
    assert taken == [2, 4]
    assert queue.clear() == [1, 3, 5, 6]  # the ones left keep their order, ahead of the stop
    assert queue.queue_time_percentiles_ms() == {"p50": 500.0, "p99": 500.0}


async def test_state_changes_anywhere_in_the_queue_become_one_event() -> None:
    queue = queued(
        IsrChangeNotified(),
        PartitionStateChanged((("b", 0),)),
        TopicsChanged(),
        PartitionStateChanged((("a", 0), ("c", 1))),
    )
    event = coalesce(PartitionStateChanged((("a", 0), ("b", 0))), queue)
    assert event == PartitionStateChanged((("a", 0), ("b", 0), ("c", 1)))
    assert rest(queue) == [IsrChangeNotified(), TopicsChanged()]


async def test_topic_changes_become_one_re_read_of_every_topic() -> None:
    queue = queued(PartitionsModified(("b",)), BrokerModified(1), PartitionsModified(("a",)))
    assert coalesce(PartitionsModified(("a",)), queue) == PartitionsModified(("a", "b"))
    assert rest(queue) == [BrokerModified(1)]


@pytest.mark.parametrize("kind", [IsrChangeNotified, BrokersChanged])
async def test_re_read_notifications_are_taken_with_the_first(
    kind: type[IsrChangeNotified | BrokersChanged],
) -> None:
    queue = queued(kind(), TopicsChanged(), kind())
    assert coalesce(kind(), queue) == kind()
    assert rest(queue) == [TopicsChanged()]


async def test_other_events_are_left_alone() -> None:
    queue = queued(TopicsChanged(), ZkPartitionReassignment())
    assert coalesce(TopicsChanged(), queue) == TopicsChanged()
    assert len(queue) == 2


async def test_disjoint_requests_of_one_mode_join_the_first_past_isr_notifications() -> None:
    first = alter(("a", 0))
    second, third = alter(("a", 1), ("b", 0)), alter(("c", 0))
    isr, states = IsrChangeNotified(), PartitionStateChanged((("a", 0),))
    queue = queued(second, isr, states, third)
    event = coalesce(first, queue)
    assert isinstance(event, ApiPartitionReassignment)
    assert event.group == (first, second, third)
    assert [e.reply for e in event.group] == [first.reply, second.reply, third.reply]
    assert rest(queue) == [isr, states]  # left queued, in order


async def test_a_lone_request_is_handled_as_it_is() -> None:
    first = alter(("a", 0))
    assert coalesce(first, queued(TopicsChanged(), alter(("a", 1)))) is first


@pytest.mark.parametrize(
    "blocker",
    [
        "the same partition",
        "another cancel mode",
        "another request",
        "the legacy znode",
        "a broker change",
        "a topic it passed",
    ],
)
async def test_the_group_ends_where_joining_would_reorder(blocker: str) -> None:
    first, second = alter(("a", 0)), alter(("b", 0))
    ahead: list[ControllerEvent] = []
    match blocker:
        case "the same partition":
            stop: ControllerEvent = alter(("c", 0), ("a", 0))
        case "another cancel mode":
            stop = alter(("c", 0), mode=CancelMode.STOP)
        case "another request":
            stop = CreateTopicsRequested(CreateTopics(()), asyncio.get_running_loop().create_future())
        case "the legacy znode":
            stop = ZkPartitionReassignment()
        case "a broker change":
            stop = BrokersChanged()
        case _:
            ahead = [PartitionsModified(("c",))]  # topic c may have grown: its requests wait
            stop = alter(("c", 5))
    after = alter(("d", 0))
    queue = queued(second, *ahead, stop, after)
    event = coalesce(first, queue)
    assert isinstance(event, ApiPartitionReassignment)
    assert event.group == (first, second)
    assert rest(queue) == [*ahead, stop, after]


async def test_a_group_stops_at_its_partition_cap() -> None:
    first, second, third = alter(("a", 0)), alter(("a", 1), ("a", 2)), alter(("a", 3))
    queue = queued(second, third)
    event = coalesce(first, queue, group_partitions=3)
    assert isinstance(event, ApiPartitionReassignment)
    assert event.group == (first, second)
    assert rest(queue) == [third]
