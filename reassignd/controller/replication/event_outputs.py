"""What one event produces for its end, as a value: created per event (by the dispatch, or once
for the failover load), filled by the handlers it runs, consumed once by
``Finisher.after_reassignments``. No long-lived part keeps an event's outputs in a field of its
own, so nothing has to clear them and nothing leaks from one event into the next.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reassignd.controller.replication.broker_requests import BrokerRequestBatch
from reassignd.topic_partition import TopicPartition


@dataclass(slots=True)
class EventOutputs:
    """One event's outputs so far."""

    requests: BrokerRequestBatch  # the control requests to send at the event's end
    # partitions whose reassignment completed (phase B wrote their final state and topic znode),
    # in order: the end elects those left without a live leader, drops them from the legacy
    # znode and the sequenced requests, and resumes deletions waiting for them
    completed: list[TopicPartition] = field(default_factory=list)
    # partitions a replica removal (a re-target or a cancel) left without a leader: the end
    # elects them (unclean when the topic allows it)
    leaderless: set[TopicPartition] = field(default_factory=set)
