"""The HTTP API's query strings: one struct per operation that reads one. Pure.

Each field is a parameter, in the order a refusal lists them (``allowed: topic, partition``): a
tuple field may be repeated (``?topic=a&topic=b``), any other is given at most once; an absent
parameter is the field's default. A value arrives as text: an integer field takes 1 to 10 decimal
digits (``0``–``9``: no sign, no space, no other script's digits), a number field what Python's
``float`` reads, a string field the text as it is; msgspec then checks the field's annotations
(ranges, lengths, enums). The door decodes a query into its struct before the handler runs
(``reassignd.http.query_door``), and the OpenAPI document's query parameters are generated from
the same structs, so the document and the parser cannot drift.

A value's refusal is worded by its annotation's ``extra``: ``refusal`` (``{quoted}`` is the text
as JSON, ``{short}`` its first 40 characters as Python's ``repr``), and ``out_of_range`` where
the range's words differ from the syntax's.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from reassignd.int_limits import INT32_MAX


class Query(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A query string: any parameter not a field is refused (400, error 42, naming the allowed)."""


class NoQuery(Query, frozen=True):
    """The query of an operation that takes no parameter: any one is refused."""


# --- reassignments ---------------------------------------------------------------------------------

# an empty name is a filter that matches nothing, as Kafka's ListPartitionReassignments takes a
# topic it does not know (and as a link built from a refused item's name carries it)
TopicFilter = Annotated[str, msgspec.Meta(description="only these topics")]
PartitionFilter = Annotated[
    int,
    msgspec.Meta(
        ge=0,
        le=INT32_MAX,
        description="only these partitions",
        extra={"refusal": "expected a non-negative integer, got {quoted}"},
    ),
]


class ListReassignmentsQuery(Query, frozen=True):
    """``GET /v1/reassignments``: a partition filter applies to the given topics (to every topic
    when none is given)."""

    topic: tuple[TopicFilter, ...] | None = None
    partition: tuple[PartitionFilter, ...] | None = None


CancelModeName = Literal["cancel", "stop"]


class CancelQuery(Query, frozen=True):
    """``DELETE /v1/reassignments[/{topic}[/{partition}]]``."""

    mode: Annotated[
        CancelModeName,
        msgspec.Meta(
            description="cancel (default): back to the original replicas; stop: keep adding replicas "
            "already in the ISR",
            extra={"refusal": 'expected "cancel" or "stop", got {quoted}'},
        ),
    ] = "cancel"


# --- topics, log dirs, quotas ----------------------------------------------------------------------


class DeleteTopicQuery(Query, frozen=True):
    """``DELETE /v1/topics/{topic}``."""

    timeout_ms: (
        Annotated[
            int,
            msgspec.Meta(
                ge=0,
                le=INT32_MAX,
                description="milliseconds (default 30000)",
                extra={"refusal": f"expected an integer 0..{INT32_MAX}, got {{quoted}}"},
            ),
        ]
        | None
    ) = None


class LogDirsQuery(Query, frozen=True):
    """``GET /v1/log-dirs``."""

    broker: (
        tuple[
            Annotated[
                int,
                msgspec.Meta(
                    ge=0,
                    le=INT32_MAX,
                    description="only these brokers",
                    extra={"refusal": "must be a broker id, got {short}"},
                ),
            ],
            ...,
        ]
        | None
    ) = None


_ENTITY_NAME = {"refusal": "expected a name, got an empty string"}


class DescribeQuotasQuery(Query, frozen=True):
    """``GET /v1/quotas``: the configured entities matching the filter (none: every one)."""

    user: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                description="this user's entities (<default>: the default; <<default>: the name <default>)",
                extra=_ENTITY_NAME,
            ),
        ]
        | None
    ) = None
    client_id: (
        Annotated[
            str,
            msgspec.Meta(
                min_length=1,
                description="this client id's entities (<default>: the default; <<default>: the name "
                "<default>)",
                extra=_ENTITY_NAME,
            ),
        ]
        | None
    ) = None


# --- the event stream ------------------------------------------------------------------------------

EVENTS_MAX_S = 86_400
Seconds = Annotated[
    float,
    msgspec.Meta(
        gt=0,
        le=EVENTS_MAX_S,
        extra={
            "refusal": "must be a number of seconds",
            "out_of_range": f"must be > 0 and at most {EVENTS_MAX_S}",
        },
    ),
]


class EventsQuery(Query, frozen=True):
    """``GET /v1/events``. ``last_event_id`` is checked by the route with the ``Last-Event-ID``
    header it stands in for (``<controller_epoch>-<sequence>``; empty: none)."""

    type: tuple[Annotated[str, msgspec.Meta(description="only records of these types")], ...] | None = None
    topic: tuple[Annotated[str, msgspec.Meta(description="only records about these topics")], ...] | None = (
        None
    )
    batch: tuple[Annotated[str, msgspec.Meta(description="only records about these batches")], ...] | None = (
        None
    )
    last_event_id: (
        Annotated[
            str,
            msgspec.Meta(
                description="resume after this record (as the Last-Event-ID header; empty: as absent)",
                extra_json_schema={"pattern": "^([0-9]+-[0-9]+)?$"},
            ),
        ]
        | None
    ) = None
    heartbeat_s: Annotated[Seconds, msgspec.Meta(description="heartbeat period")] | None = None
    max_s: Annotated[Seconds, msgspec.Meta(description="end the stream after")] | None = None
