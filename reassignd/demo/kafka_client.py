"""The demo's stock-client step: kafka-python's KafkaAdminClient, unchanged, asks the controller's
Kafka listener about the demo topic (the same answer the HTTP API gives)."""

from __future__ import annotations

import asyncio
from typing import Any

from reassignd.demo.cluster import say


def _describe(address: str, topic: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from kafka.admin import KafkaAdminClient  # noqa: PLC0415 (only this step needs the client)

    admin = KafkaAdminClient(bootstrap_servers=address, client_id="reassignd-demo", request_timeout_ms=10000)
    try:
        return admin.describe_cluster(), admin.describe_topics([topic])
    finally:
        admin.close()


async def show_stock_client(address: str, topic: str) -> None:
    say(f"\nKafka's own admin client at kafka://{address} (kafka-python's KafkaAdminClient):")
    say(f"  KafkaAdminClient(bootstrap_servers={address!r}).describe_topics([{topic!r}])")
    cluster, topics = await asyncio.to_thread(_describe, address, topic)
    brokers = sorted(b["broker_id"] for b in cluster["brokers"])
    say(f"  brokers {brokers}, controller {cluster['controller_id']}, cluster id {cluster['cluster_id']}")
    for t in topics:
        for p in sorted(t["partitions"], key=lambda p: p["partition_index"]):
            say(
                f"  {t['name']}-{p['partition_index']}: leader {p['leader_id']}, replicas {p['replica_nodes']},"
                f" isr {p['isr_nodes']}"
            )
