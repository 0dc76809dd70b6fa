"""Batch progress in Prometheus (``/metrics``): bytes, rate, ETA and stuck moves per unfinished
batch, from the same agent reports as ``GET /v1/batches``.

The numbers need the agents' reports, which ``/metrics`` gathers (asynchronously) before it
encodes the registry; a collector then yields what was gathered last. One collector per registry.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from reassignd.executor.progress import BatchStatus

_COLLECTORS: weakref.WeakKeyDictionary[CollectorRegistry, BatchProgressCollector] = (
    weakref.WeakKeyDictionary()
)


class BatchProgressCollector(Collector):
    def __init__(self) -> None:
        self.statuses: Sequence[BatchStatus] = ()

    def collect(self) -> Iterator[Metric]:
        families = {
            "done": GaugeMetricFamily(
                "reassignd_batch_bytes_done", "Bytes copied by the batch's moves", labels=["batch"]
            ),
            "remaining": GaugeMetricFamily(
                "reassignd_batch_bytes_remaining",
                "Bytes the batch's moves still have to copy",
                labels=["batch"],
            ),
            "rate": GaugeMetricFamily(
                "reassignd_batch_bytes_per_second", "The batch's current copy rate", labels=["batch"]
            ),
            "eta": GaugeMetricFamily(
                "reassignd_batch_eta_seconds", "Estimated seconds until the batch completes", labels=["batch"]
            ),
            "stuck": GaugeMetricFamily(
                "reassignd_batch_stuck_moves", "Moves of the batch that are stuck", labels=["batch"]
            ),
        }
        for s in self.statuses:
            label = [s.batch_id]
            families["done"].add_metric(label, s.bytes_done)
            families["remaining"].add_metric(label, max(0, s.bytes_total - s.bytes_done))
            families["rate"].add_metric(label, s.bytes_per_s)
            if s.eta_s is not None:
                families["eta"].add_metric(label, s.eta_s)
            families["stuck"].add_metric(label, len(s.stuck))
        yield from families.values()


def collector_for(registry: CollectorRegistry) -> BatchProgressCollector:
    found = _COLLECTORS.get(registry)
    if found is None:
        found = BatchProgressCollector()
        registry.register(found)
        _COLLECTORS[registry] = found
    return found
