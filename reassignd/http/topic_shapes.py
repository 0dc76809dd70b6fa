"""The JSON answers of CreateTopics, DeleteTopics and CreatePartitions, and their Retry-After.

Pure: :class:`TopicsResult` in, JSON-ready dicts out. Per-topic errors carry
Kafka's default message when the controller gave none.
"""

from __future__ import annotations

import math
from typing import Any

from reassignd.controller.requests import TopicResult, TopicsResult
from reassignd.errors import DEFAULT_MESSAGES
from reassignd.http.responses import error_body

Json = dict[str, Any]


def topic_result_json(result: TopicResult) -> Json:
    message = result.error_message
    if message is None and result.error_code != 0:
        message = DEFAULT_MESSAGES.get(result.error_code)
    return {"name": result.name, **error_body(result.error_code, message)}


def created_topic_json(result: TopicResult) -> Json:
    """CreateTopics' entry: the sizes appear when known (what was, or would be, created)."""
    entry = topic_result_json(result)
    if result.num_partitions is not None:
        entry["num_partitions"] = result.num_partitions
    if result.replication_factor is not None:
        entry["replication_factor"] = result.replication_factor
    return entry


def create_topics_json(result: TopicsResult) -> Json:
    return {
        "throttle_time_ms": result.throttle_time_ms,
        "topics": [created_topic_json(r) for r in result.results],
    }


def delete_topics_json(result: TopicsResult) -> Json:
    return {
        "throttle_time_ms": result.throttle_time_ms,
        "responses": [topic_result_json(r) for r in result.results],
    }


def create_partitions_json(result: TopicsResult) -> Json:
    return {
        "throttle_time_ms": result.throttle_time_ms,
        "results": [topic_result_json(r) for r in result.results],
    }


def retry_after_headers(throttle_time_ms: int) -> dict[str, str]:
    """``Retry-After`` in whole seconds, rounded up, when a topic was throttled; else none."""
    if throttle_time_ms <= 0:
        return {}
    return {"Retry-After": str(math.ceil(throttle_time_ms / 1000))}
