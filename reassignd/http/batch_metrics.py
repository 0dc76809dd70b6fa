"""Batch progress in Prometheus (``/metrics``): bytes, rate, ETA and stuck moves per unfinished
batch, from the statuses last computed with the agents' reports
(:class:`~reassignd.agent_reports.status_cache.BatchStatusCache`); ``/metrics`` hands them to the
collector before it encodes the registry, and never asks an agent. One collector per registry.

The per-batch families name batches (:data:`NAMED_FAMILIES`), so ``/metrics`` shows them to
callers with a token only; the ``reassignd_batches_*`` families sum them up for everyone.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from reassignd.executor.progress import BatchProgress

NAMED_FAMILIES = frozenset(
    {
        "reassignd_batch_bytes_done",
        "reassignd_batch_bytes_remaining",
        "reassignd_batch_bytes_per_second",
        "reassignd_batch_eta_seconds",
        "reassignd_batch_stuck_moves",
    }
)

_COLLECTORS: weakref.WeakKeyDictionary[CollectorRegistry, BatchProgressCollector] = (
    weakref.WeakKeyDictionary()
)


class BatchProgressCollector(Collector):
    def __init__(self) -> None:
        self.statuses: Sequence[BatchProgress] = ()

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
        yield from self._sums()

    def _sums(self) -> Iterator[Metric]:
        """The same figures over every unfinished batch, without their ids."""
        statuses = self.statuses
        etas = [s.eta_s for s in statuses if s.eta_s is not None]
        figures = (
            (
                "bytes_done",
                "Bytes copied by the unfinished batches' moves",
                sum(s.bytes_done for s in statuses),
            ),
            (
                "bytes_remaining",
                "Bytes the unfinished batches' moves still have to copy",
                sum(max(0, s.bytes_total - s.bytes_done) for s in statuses),
            ),
            (
                "bytes_per_second",
                "The unfinished batches' current copy rate",
                sum(s.bytes_per_s for s in statuses),
            ),
            (
                "eta_seconds",
                "Estimated seconds until the last unfinished batch completes (0: none moving)",
                max(etas, default=0),
            ),
            ("stuck_moves", "Stuck moves of the unfinished batches", sum(len(s.stuck) for s in statuses)),
        )
        for name, documentation, value in figures:
            yield GaugeMetricFamily(f"reassignd_batches_{name}", documentation, value=value)


def collector_for(registry: CollectorRegistry) -> BatchProgressCollector:
    found = _COLLECTORS.get(registry)
    if found is None:
        found = BatchProgressCollector()
        registry.register(found)
        _COLLECTORS[registry] = found
    return found
