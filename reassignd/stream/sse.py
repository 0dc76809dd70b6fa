"""Server-sent events framing. Pure.

One record is one SSE event: ``id: <controller_epoch>-<sequence>``, ``event: <type>``,
``data: <record JSON>`` and a blank line. A comment line (``: ...``) is a heartbeat. When a
client resumes with a ``Last-Event-ID`` the history no longer covers, the stream first says so
with an event of type ``gap`` (no id) naming the last id the client had and the first one the
history still holds.
"""

from __future__ import annotations

import json

from reassignd.stream.records import StreamRecord


def frame(record: StreamRecord) -> bytes:
    """The record's event, its JSON encoded once however many streams carry it."""
    return b"id: %s\nevent: %s\ndata: %s\n\n" % (record.id.encode(), record.type.encode(), record.json)


def gap_frame(last_id: str, first_id: str | None) -> bytes:
    data = json.dumps({"type": "gap", "last_event_id": last_id, "first_available": first_id})
    return f"event: gap\ndata: {data}\n\n".encode()


def heartbeat() -> bytes:
    return b": heartbeat\n\n"
