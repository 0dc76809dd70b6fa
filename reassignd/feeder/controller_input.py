"""Reading the cluster from a controller's HTTP API: brokers with racks, every topic's
assignment, and partition sizes from ``GET /v1/log-dirs`` (sizes 0, with a warning, when the
controller has no such route).

The answers are turned into the snapshot JSON (:func:`reassignd.feeder.inputs.parse_snapshot`),
so a cluster read from a controller and one read from a file go through the same checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ApiError
from reassignd.concurrency import for_each
from reassignd.feeder.inputs import InputError, parse_log_dirs, parse_snapshot
from reassignd.feeder.model import Cluster, with_sizes
from reassignd.tls import ClientTls
from reassignd.topic_partition import TopicPartition

CONCURRENT_READS = 16


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
        brokers = await api.get("/v1/brokers")
        listing = await api.get("/v1/topics")
        listed = listing.get("topics") if isinstance(listing, dict) else None
        if not isinstance(listed, list):
            raise InputError(f'{api.base_url}/v1/topics: expected {{"topics": [...]}}')
        names = [t["name"] for t in listed if isinstance(t, dict) and isinstance(t.get("name"), str)]
        found: dict[int, Any] = {}

        async def one(numbered: tuple[int, str]) -> None:
            i, name = numbered
            try:
                found[i] = await api.get(f"/v1/topics/{quote(name, safe='')}")
            except ApiError as e:
                if e.status != 404 and e.error_code != 3:  # not deleted meanwhile
                    raise

        await for_each(list(enumerate(names)), one, CONCURRENT_READS, name="topic-read")
        topics = [found[i] for i in range(len(names)) if found.get(i) is not None]
        sizes: dict[TopicPartition, int] = {}
        if want_sizes:
            try:
                sizes = parse_log_dirs(await api.get("/v1/log-dirs"), f"{api.base_url}/v1/log-dirs")
            except ApiError as e:
                if e.status != 404:
                    raise
                warn("the controller has no GET /v1/log-dirs: every partition counts as 0 bytes")
    source = f"{bootstrap} (GET /v1/brokers, /v1/topics)"
    registered = brokers.get("brokers") if isinstance(brokers, dict) else None
    cluster = parse_snapshot({"brokers": registered, "topics": topics}, source)
    return with_sizes(cluster, sizes)
