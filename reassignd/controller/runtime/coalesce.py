"""Handling many queued events as one: coalesced watch notifications, group-committed requests.

Pure logic over the event queue (no I/O): the consumer calls :func:`coalesce` on each event it
takes, before handling it.
"""

from __future__ import annotations

import dataclasses

from reassignd.controller.instance.event_queue import ControllerEventQueue
from reassignd.controller.instance.events import (
    ApiPartitionReassignment,
    BrokersChanged,
    ControllerEvent,
    IsrChangeNotified,
    PartitionsModified,
    PartitionStateChanged,
)

# at most this many partitions in one group commit of API reassignment requests
GROUP_COMMIT_PARTITIONS = 10_000


def coalesce(
    event: ControllerEvent,
    queue: ControllerEventQueue[ControllerEvent],
    group_partitions: int = GROUP_COMMIT_PARTITIONS,
) -> ControllerEvent:
    """Handle many queued events as one.

    Watch notifications carry no data (their handler re-reads ZooKeeper), so every queued
    notification of the same kind is taken with the first one, wherever it waits: state
    znode changes become one event over all their partitions, topic znode changes one
    re-read of all those topics, ISR change notifications and broker set changes one
    re-read each.

    AlterPartitionReassignments requests are group-committed: the requests queued after
    this one join it (one round of ZooKeeper writes for all) while they have its cancel
    mode and name partitions no earlier member names, so that handling them together is
    handling them in order. ISR and topic znode notifications between them stay queued (a
    member naming a topic whose notification it passed ends the group: the topic may have
    grown); any other event ends the group, which keeps requests in order with every other
    request and with the broker set."""
    match event:
        case PartitionStateChanged(partitions=partitions):
            tps = dict.fromkeys(partitions)
            for e in queue.take(lambda e: isinstance(e, PartitionStateChanged)):
                assert isinstance(e, PartitionStateChanged)
                tps.update(dict.fromkeys(e.partitions))
            return PartitionStateChanged(tuple(tps))
        case PartitionsModified(topics=topics):
            names = dict.fromkeys(topics)
            for e in queue.take(lambda e: isinstance(e, PartitionsModified)):
                assert isinstance(e, PartitionsModified)
                names.update(dict.fromkeys(e.topics))
            return PartitionsModified(tuple(names))
        case IsrChangeNotified() | BrokersChanged():
            kind = type(event)
            queue.take(lambda e: isinstance(e, kind))
            return event
        case ApiPartitionReassignment(request=request):
            named = {tp for tp, _ in request.targets}
            count = len(request.targets)
            passed: set[str] = set()  # topics of the topic-znode notifications left queued

            def joins(e: ControllerEvent) -> bool | None:
                nonlocal count
                if isinstance(e, IsrChangeNotified | PartitionStateChanged):
                    return False  # an ISR re-read: no request's validation depends on it
                if isinstance(e, PartitionsModified):
                    passed.update(e.topics)  # new partitions: a member naming one ends the group
                    return False
                if (
                    not isinstance(e, ApiPartitionReassignment)
                    or e.request.mode is not request.mode
                    or count + len(e.request.targets) > group_partitions
                ):
                    return None
                theirs = {tp for tp, _ in e.request.targets}
                if not named.isdisjoint(theirs) or any(t in passed for t, _ in theirs):
                    return None
                named.update(theirs)
                count += len(e.request.targets)
                return True

            joined = queue.take(joins)
            if not joined:
                return event
            return dataclasses.replace(
                event, joined=tuple(e for e in joined if isinstance(e, ApiPartitionReassignment))
            )
    return event
