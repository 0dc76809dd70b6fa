"""Reads only the active controller can answer.

A standby publishes a snapshot without cluster data (no brokers, topics or reassignments: it
loads nothing until it wins the election), so answering its snapshot would read as an empty
cluster. Those reads answer as writes on a standby do: 503, error 41 NOT_CONTROLLER and the
active controller's id and URL (added by the error middleware). ``/v1/status``, the health
endpoints, ``/metrics``, ``/v1/openapi.json`` and ``GET /v1/quotas`` (read from ZooKeeper) keep
answering on every instance.
"""

from __future__ import annotations

from aiohttp import web

from reassignd.controller.model.snapshot import ClusterSnapshot
from reassignd.errors import NotController
from reassignd.http.keys import VIEW


def active_snapshot(request: web.Request) -> ClusterSnapshot:
    """The last published snapshot of the active controller; raises NotController on a standby."""
    snapshot = request.app[VIEW].snapshot()
    if not snapshot.active:
        raise NotController()
    return snapshot
