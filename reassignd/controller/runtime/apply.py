"""The applier of an event's outputs: the one place where control requests leave the controller
and requests are answered. The event's last batch is sealed, every sealed batch goes to the
brokers' queues in order, then each reply is given — so a client hears the answer only after the
requests its change caused were queued (Kafka answers after ``sendRequestsToBrokers`` too).

The states the last batch names are encoded first, in slices that yield to the loop (a failover's
full LeaderAndIsr names every partition); from then on it is synchronous: nothing else runs on
the loop between the first request queued and the last reply.
An event that fails before its end applies nothing: its requests are never sent (the reload or the
next controller sends the cluster's state whole) and its requests are answered by the failure.
"""

from __future__ import annotations

from reassignd.controller.effects.event_outputs import EventOutputs
from reassignd.controller.instance.shared import Shared


async def apply(shared: Shared, out: EventOutputs) -> None:
    await out.requests.prepare()
    out.seal()
    outgoing, out.outgoing = out.outgoing, []
    shared.deliver(outgoing)
    replies, out.replies = out.replies, []
    for answer in replies:
        answer()
