"""The children of one of the controller's persistent znodes, read by a handler: one that someone
deleted is re-created by a write step of the event (``EventOutputs.ensure_paths``: fenced, by the
applier), reported, and read again, so the watch is armed on it — as Kafka's controller
re-creates its paths. The handlers' counterpart of ``ZkWriter.children``, whose re-creation is not
a step of an event.
"""

from __future__ import annotations

from reassignd.controller.replication import loader
from reassignd.controller.replication.event_outputs import EventOutputs
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import NoNodeError
from reassignd.zk.values import WatchCallback


async def children(
    zk: ZkClient, out: EventOutputs, refuse: loader.Report, path: str, watch: WatchCallback | None = None
) -> list[str]:
    """The children of ``path`` (``watch`` armed); a missing ``path`` is re-created first."""
    try:
        return await zk.children(path, watch=watch)
    except NoNodeError:
        pass
    await out.ensure_paths([path])
    refuse(path, "missing (deleted outside the controller): re-created", "persistent_path")
    return await zk.children(path, watch=watch)
