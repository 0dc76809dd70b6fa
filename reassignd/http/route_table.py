"""Every operation of the HTTP API, declared once: the app registers these routes
(``reassignd.http.app``) and the OpenAPI document's paths are generated from them
(``reassignd.http.openapi``), the schemas from the contract structs they name.

A new endpoint is a handler under ``routes/`` and one ``Operation`` here.
"""

from __future__ import annotations

from aiohttp.typedefs import Handler

from reassignd.contracts import admin, cluster
from reassignd.contracts import requests as rq
from reassignd.contracts.records import TYPES as RECORD_TYPES
from reassignd.http.callers import CLIENT_ID_HEADER
from reassignd.http.openapi_base import ETAG, IF_NONE_MATCH, integer
from reassignd.http.operation import (
    ADMIN,
    AUTH,
    BAD_REQUEST,
    NOT_CONTROLLER,
    NOT_MODIFIED,
    PARTITIONS_PER_REQUEST,
    RETRY_AFTER,
    TOPIC_UNDER_TOPICS,
    VIEWER,
    Answer,
    Json,
    Operation,
    error,
    link,
    query,
    read,
    write,
)
from reassignd.http.route_table_moves import BATCHES, REASSIGNMENTS
from reassignd.http.routes import cluster as cluster_routes
from reassignd.http.routes import docs, health, log_dirs, page, quotas, stream, topics
from reassignd.int_limits import INT32_MAX

CLIENT_ID: Json = {
    "name": CLIENT_ID_HEADER,
    "in": "header",
    "required": False,
    "description": "the client id quotas are charged to (empty when absent); logged",
    "schema": {"type": "string"},
}
SECONDS = {"type": "number", "exclusiveMinimum": 0, "maximum": 86400}


def topic_links(topic: str) -> dict[str, Json]:
    """Links from an answer naming a topic (``topic``: where, a runtime expression) to the
    operations on it."""
    return {
        "describe": link("describeTopic", "the topic's partitions", topic=topic),
        "delete": link("deleteTopic", "delete the topic", topic=topic),
        "cancelReassignments": link("cancelTopicReassignments", "cancel its reassignments", topic=topic),
    }


# One event of GET /v1/events as an SSE reader sees it (OpenAPI 3.1 has no itemSchema: the stream
# media type's schema is one event's): a record (event: its type, id: <epoch>-<sequence>, data:
# its JSON), or a gap (no id of its own). Heartbeats are comments, not events.
SSE_EVENT = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"enum": sorted(str(t) for t in RECORD_TYPES | {"gap"})},
        "id": {"type": "string", "pattern": "^[0-9]+-[0-9]+$"},
        "data": {"type": "string", "contentMediaType": "application/json"},
    },
    "additionalProperties": False,
}


def _page(path: str, handler: Handler, operation_id: str, summary: str, what: str, media: str) -> Operation:
    return Operation(
        "GET",
        path,
        handler,
        operation_id,
        summary,
        "page",
        None,
        {"200": Answer(what, media=(media,))},
    )


HEALTH = (
    Operation(
        "GET",
        "/healthz",
        health.healthz,
        "healthz",
        "process is alive",
        "health",
        None,
        {"200": Answer("alive", cluster.Health)},
    ),
    Operation(
        "GET",
        "/readyz",
        health.readyz,
        "readyz",
        "connected to ZooKeeper and active or following a known active controller",
        "health",
        None,
        {
            "200": Answer("ready", cluster.Readiness),
            "503": Answer("not ready, with the reason", cluster.Readiness),
        },
    ),
    Operation(
        "GET",
        "/metrics",
        health.metrics,
        "metrics",
        "Prometheus metrics (text format; OpenMetrics when asked for); the families that "
        "name quota users, client ids or batches only with a token (any role) when the "
        "controller has a tokens file, their unlabelled sums for everyone",
        "health",
        None,
        {
            "200": Answer("metrics", media=("text/plain", "application/openmetrics-text")),
            "401": AUTH["401"],
        },
    ),
    Operation(
        "GET",
        "/v1/openapi.json",
        docs.openapi,
        "openapi",
        "this document",
        "meta",
        VIEWER,
        read(Answer("OpenAPI 3.1", schema={"type": "object"})),
    ),
    _page(
        "/",
        page.page,
        "statusPage",
        "the status page (HTML; it reads this API with the user's token)",
        "the page",
        "text/html",
    ),
    _page(
        page.UI_PREFIX + "app.js",
        page.script,
        "statusPageScript",
        "the status page's script",
        "the script",
        "text/javascript",
    ),
    _page(
        page.UI_PREFIX + "style.css",
        page.style,
        "statusPageStyle",
        "the status page's style",
        "the style",
        "text/css",
    ),
)

CLUSTER = (
    Operation(
        "GET",
        "/v1/whoami",
        page.whoami,
        "whoami",
        "the caller's user and role (the status page shows admin actions to admins)",
        "cluster",
        VIEWER,
        read(Answer("the caller", cluster.Caller)),
    ),
    Operation(
        "GET",
        "/v1/events",
        stream.events,
        "events",
        "the controller's event records as server-sent events (text/event-stream): "
        "id <controller_epoch>-<sequence>, event <type>, data the record's JSON",
        "cluster",
        VIEWER,
        read(
            Answer(
                "the stream (history after Last-Event-ID first, then live); its schema is one event's",
                media=("text/event-stream",),
                media_schemas={"text/event-stream": SSE_EVENT},
            ),
            BAD_REQUEST,
            {
                "503": error(
                    "as many streams are open as --events-max-subscribers allows; retry later",
                    {"Retry-After": {"schema": {"type": "integer", "minimum": 1}}},
                )
            },
        ),
        (
            query("type", {"type": "string"}, "only records of these types", repeatable=True),
            query("topic", {"type": "string"}, "only records about these topics", repeatable=True),
            query("batch", {"type": "string"}, "only records about these batches", repeatable=True),
            query(
                "last_event_id",
                {"type": "string", "pattern": "^([0-9]+-[0-9]+)?$"},
                "resume after this record (as the Last-Event-ID header; empty: as absent)",
            ),
            query("heartbeat_s", SECONDS, "heartbeat period"),
            query("max_s", SECONDS, "end the stream after"),
        ),
    ),
    Operation(
        "POST",
        "/v1/controller/resign",
        cluster_routes.resign,
        "resignController",
        "planned hand-over: this active instance gives its role up after the event in hand, a "
        "standby wins at once, queued requests are answered 41 naming it (admin)",
        "cluster",
        ADMIN,
        write(
            Answer(
                "the hand-over happened: the instance that won the role, or null if none did "
                "(then this one took it again)",
                cluster.HandOver,
            ),
            body=False,
        ),
    ),
    Operation(
        "GET",
        "/v1/status",
        cluster_routes.status,
        "status",
        "this instance and the cluster",
        "cluster",
        VIEWER,
        read(Answer("status", cluster.Status)),
    ),
    Operation(
        "GET",
        "/v1/log-dirs",
        log_dirs.log_dirs,
        "describeLogDirs",
        "replicas and their sizes per broker, in the JSON kafka-log-dirs --describe prints",
        "cluster",
        VIEWER,
        read(Answer("log dirs", cluster.LogDirs), BAD_REQUEST, NOT_CONTROLLER),
        (query("broker", integer(0, INT32_MAX), "only these brokers", repeatable=True),),
    ),
    Operation(
        "POST",
        "/v1/log-dirs/moves",
        log_dirs.move_log_dirs,
        "moveLogDirs",
        "AlterReplicaLogDirs for one broker: move its replicas between its log dirs, forwarded to "
        "its agent as Kafka's request goes to the broker (admin)",
        "cluster",
        ADMIN,
        {
            **write(
                Answer(
                    "per-replica results (HTTP 200 even when some were refused): 0, "
                    "9 REPLICA_NOT_AVAILABLE (not hosted yet: the dir is kept for when it comes), "
                    "57 LOG_DIR_NOT_FOUND, 56 KAFKA_STORAGE_ERROR",
                    cluster.MoveLogDirsResponse,
                )
            ),
            "404": error("the broker is not registered (error 42); nothing was forwarded"),
        },
        request=rq.MoveLogDirsRequest,
    ),
    Operation(
        "GET",
        "/v1/brokers",
        cluster_routes.brokers,
        "listBrokers",
        "live brokers",
        "cluster",
        VIEWER,
        read(
            Answer(
                "brokers",
                cluster.Brokers,
                links={
                    verb: link(
                        f"{verb}Broker", f"{verb} the first broker", broker_id="$response.body#/brokers/0/id"
                    )
                    for verb in ("demote", "promote")
                },
            ),
            NOT_CONTROLLER,
        ),
    ),
)

TOPICS = (
    Operation(
        "GET",
        "/v1/topics",
        cluster_routes.topics,
        "listTopics",
        "topics",
        "cluster",
        VIEWER,
        read(
            Answer("topics", cluster.Topics, ETAG, links=topic_links("$response.body#/topics/0/name")),
            NOT_MODIFIED,
            NOT_CONTROLLER,
        ),
        (IF_NONE_MATCH,),
    ),
    Operation(
        "POST",
        "/v1/topics",
        topics.create_topics,
        "createTopics",
        "CreateTopics",
        "topics",
        ADMIN,
        write(
            Answer(
                "per-topic results",
                admin.CreateTopicsResponse,
                RETRY_AFTER,
                links=topic_links("$response.body#/topics/0/name"),
            )
        ),
        (CLIENT_ID,),
        rq.CreateTopicsRequest,
        "Each topic is checked before anything is written and answered on its own: "
        "a name given twice fails every copy (42), an illegal name 17, a null config value 42, a "
        "config name Kafka does not know, a value of the wrong type or out of range, or configs "
        "that would not fit one ZooKeeper znode 40 INVALID_CONFIG; the other topics are created.",
    ),
    Operation(
        "GET",
        "/v1/topics/{topic}",
        cluster_routes.topic,
        "describeTopic",
        "one topic's partitions",
        "cluster",
        VIEWER,
        read(
            Answer("the topic", cluster.Topic, ETAG),
            NOT_MODIFIED,
            {"404": error("no such topic (error 3)")},
            NOT_CONTROLLER,
        ),
        (TOPIC_UNDER_TOPICS, IF_NONE_MATCH),
    ),
    Operation(
        "DELETE",
        "/v1/topics/{topic}",
        topics.delete_topic,
        "deleteTopic",
        "DeleteTopics for one topic",
        "topics",
        ADMIN,
        write(Answer("the topic's result", admin.DeleteTopicsResponse, RETRY_AFTER), body=False),
        (
            TOPIC_UNDER_TOPICS,
            query("timeout_ms", integer(0, INT32_MAX), "milliseconds (default 30000)"),
            CLIENT_ID,
        ),
    ),
    Operation(
        "POST",
        "/v1/topics/delete",
        topics.delete_topics,
        "deleteTopics",
        "DeleteTopics",
        "topics",
        ADMIN,
        write(Answer("per-topic results", admin.DeleteTopicsResponse, RETRY_AFTER)),
        (CLIENT_ID,),
        rq.DeleteTopicsRequest,
    ),
    Operation(
        "POST",
        "/v1/topics/partitions",
        topics.create_partitions,
        "createPartitions",
        "CreatePartitions",
        "topics",
        ADMIN,
        write(Answer("per-topic results", admin.CreatePartitionsResponse, RETRY_AFTER)),
        (CLIENT_ID,),
        rq.CreatePartitionsRequest,
        "A request adding " + PARTITIONS_PER_REQUEST,
    ),
)


QUOTAS = (
    Operation(
        "GET",
        "/v1/quotas",
        quotas.describe_quotas,
        "describeQuotas",
        "DescribeClientQuotas: the configured entities matching the filter (none: every one)",
        "quotas",
        VIEWER,
        read(Answer("entities and their values", admin.DescribeQuotasResponse), BAD_REQUEST),
        (
            query(
                "user",
                {"type": "string", "minLength": 1},
                "this user's entities (<default>: the default; <<default>: the name <default>)",
            ),
            query(
                "client_id",
                {"type": "string", "minLength": 1},
                "this client id's entities (<default>: the default; <<default>: the name <default>)",
            ),
        ),
    ),
    Operation(
        "POST",
        "/v1/quotas",
        quotas.alter_quotas,
        "alterQuotas",
        "AlterClientQuotas for controller_mutation_rate",
        "quotas",
        ADMIN,
        write(Answer("per-entity results", admin.AlterQuotasResponse)),
        request=rq.AlterQuotasRequest,
        description="An entity whose config znode path (its names URL-encoded as Kafka "
        "sanitizes them) would be over 4,096 bytes is answered 42 INVALID_REQUEST and nothing "
        "is written.",
    ),
)


# In the OpenAPI document's order; the app registers them in this order too.
OPERATIONS: tuple[Operation, ...] = (*HEALTH, *CLUSTER, *TOPICS, *REASSIGNMENTS, *BATCHES, *QUOTAS)
