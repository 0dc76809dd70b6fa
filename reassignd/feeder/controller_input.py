"""Reading the cluster from a controller's HTTP API: brokers with racks, every topic's
assignment, and partition sizes, replicas' log directories and their capacities from
``GET /v1/log-dirs`` (sizes 0, with a warning, when the
controller has no such route).

The API client decodes the answers into the contract's structs; they are then turned into the
snapshot JSON (:func:`reassignd.feeder.inputs.parse_snapshot`) and the DescribeLogDirs document
(:func:`reassignd.feeder.inputs.parse_log_dirs`), so a cluster read from a controller and one read
from files go through the same checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ApiError
from reassignd.concurrency import for_each
from reassignd.contracts.cluster import Partition
from reassignd.feeder.inputs import parse_dir_places, parse_log_dirs, parse_snapshot
from reassignd.feeder.model import Cluster, with_dirs, with_sizes
from reassignd.tls import ClientTls
from reassignd.topic_partition import TopicPartition

CONCURRENT_READS = 16


def _as_json(value: object) -> Any:
    """The contract's values as their JSON reads (lists, dicts), as a snapshot file gives them."""
    return msgspec.json.decode(msgspec.json.encode(value))


async def read_cluster(
    bootstrap: str,
    token: str | None,
    timeout_s: float,
    *,
    want_sizes: bool,
    warn: Callable[[str], None],
    tls: ClientTls | None = None,
) -> Cluster:
    async with ApiClient.open(bootstrap, token, timeout_s, tls=tls) as api:
        brokers = await api.brokers()
        names = [t.name for t in (await api.topics()).topics]
        found: dict[int, dict[int, Partition]] = {}

        async def one(numbered: tuple[int, str]) -> None:
            i, name = numbered
            try:
                found[i] = await api.topic(name)
            except ApiError as e:
                if e.status != 404 and e.error_code != 3:  # not deleted meanwhile
                    raise

        await for_each(list(enumerate(names)), one, CONCURRENT_READS, name="topic-read")
        topics = [
            {"name": name, "partitions": _as_json(list(found[i].values()))}
            for i, name in enumerate(names)
            if i in found
        ]
        sizes: dict[TopicPartition, int] = {}
        places: tuple[dict[tuple[str, int, int], str], dict[int, dict[str, int]]] = ({}, {})
        if want_sizes:
            try:
                log_dirs = _as_json(await api.log_dirs())
                sizes = parse_log_dirs(log_dirs, f"{api.base_url}/v1/log-dirs")
                places = parse_dir_places(log_dirs, f"{api.base_url}/v1/log-dirs")
            except ApiError as e:
                if e.status != 404:
                    raise
                warn("the controller has no GET /v1/log-dirs: every partition counts as 0 bytes")
    source = f"{bootstrap} (GET /v1/brokers, /v1/topics)"
    registered = _as_json(brokers.brokers)
    cluster = parse_snapshot({"brokers": registered, "topics": topics}, source)
    return with_dirs(with_sizes(cluster, sizes), *places)
