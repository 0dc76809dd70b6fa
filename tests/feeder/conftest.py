"""Fixtures of the feeder tests: small clusters built with Kafka's placement, and one local Spark
context per test process (``local[2]``, no UI, quiet logs, a JVM that starts fast; stopped at the
end): a JVM per pytest-xdist worker that runs a Spark test, rather than one per module on every
such worker. The acceptance tests run ``reassignd feed plan`` in this process too, on this
context (the command uses the context its process already runs)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from reassignd.controller.topics.placement import BrokerMeta, assign_replicas
from reassignd.feeder.model import Cluster, Row, build_cluster
from tests.feeder.spark_env import fast_jvm_environ


def kafka_cluster(
    brokers: int, racks: int, topics: int, partitions: int, rf: int = 3, seed: int = 1, sigma: float = 1.0
) -> Cluster:
    """Topics placed rack-aware as Kafka creates them, sizes log-normal."""
    rng = random.Random(seed)
    rack_of: dict[int, str | None] = {b: f"r{b % racks}" for b in range(1, brokers + 1)}
    metas = [BrokerMeta(b, rack_of[b]) for b in sorted(rack_of)]
    rows: list[Row] = []
    for t in range(topics):
        for p, replicas in assign_replicas(metas, partitions, rf, rng=rng).items():
            size = int(rng.lognormvariate(20, sigma))
            rows.append((f"topic-{t}", p, size, replicas, replicas))
    return build_cluster(rack_of, rows)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from reassignd.feeder.spark_job import spark_context  # noqa: PLC0415 (pyspark only here)

    with fast_jvm_environ():
        context = spark_context("local[2]", app_name="reassignd-tests")
    try:
        yield context
    finally:
        context.stop()
