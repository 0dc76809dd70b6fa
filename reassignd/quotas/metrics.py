"""Prometheus gauges per quota entity, from :meth:`QuotaManager.snapshot`.

Kafka's ControllerMutation metrics ``tokens``, ``mutation-rate`` and ``throttle-time`` per
user/client-id, in Prometheus spelling, plus the configured rate and the rejected-topic count.
Labels are Kafka's metric tags: ``user`` and ``client_id``, ``""`` for a missing component.
Those families name users and client ids (:data:`NAMED_FAMILIES`): ``/metrics`` shows them to
callers with a token only; three unlabelled gauges keep the counts for everyone.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Gauge

from reassignd.quotas.manager import EntitySnapshot

_LABELS = ("user", "client_id")
NAMED_FAMILIES = frozenset(
    {
        "reassignd_quota_tokens",
        "reassignd_quota_mutation_rate",
        "reassignd_quota_throttle_time_ms",
        "reassignd_quota_controller_mutation_rate",
        "reassignd_quota_rejected_topics",
    }
)


class QuotaMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.tokens = Gauge(
            "reassignd_quota_tokens",
            "Remaining tokens in the entity's bucket; below 0 the entity is throttled (tokens)",
            _LABELS,
            registry=registry,
        )
        self.mutation_rate = Gauge(
            "reassignd_quota_mutation_rate",
            "Admitted partition mutations per second over the quota window (mutation-rate)",
            _LABELS,
            registry=registry,
        )
        self.throttle_time_ms = Gauge(
            "reassignd_quota_throttle_time_ms",
            "Throttle time of the entity's last rejected topic, in ms (throttle-time)",
            _LABELS,
            registry=registry,
        )
        self.rate = Gauge(
            "reassignd_quota_controller_mutation_rate",
            "The configured controller_mutation_rate applied to the entity, per second",
            _LABELS,
            registry=registry,
        )
        self.rejected_topics = Gauge(
            "reassignd_quota_rejected_topics",
            "Topics rejected with THROTTLING_QUOTA_EXCEEDED since the entity's bucket was created",
            _LABELS,
            registry=registry,
        )
        # the same figures without names
        self.entities = Gauge(
            "reassignd_quota_entities", "Quota entities (user, client id) with a bucket", registry=registry
        )
        self.throttled_entities = Gauge(
            "reassignd_quota_throttled_entities",
            "Quota entities whose bucket is below 0 tokens (being throttled)",
            registry=registry,
        )
        self.rejected_topics_overall = Gauge(
            "reassignd_quota_rejected_topics_overall",
            "Topics rejected with THROTTLING_QUOTA_EXCEEDED, summed over the entities with a bucket",
            registry=registry,
        )
        self._gauges = (
            self.tokens,
            self.mutation_rate,
            self.throttle_time_ms,
            self.rate,
            self.rejected_topics,
        )
        self._shown: set[tuple[str, str]] = set()

    def update(self, snapshot: Iterable[EntitySnapshot]) -> None:
        """Show exactly the entities of ``snapshot`` (dropped buckets disappear)."""
        shown: set[tuple[str, str]] = set()
        throttled = rejected = 0
        for s in snapshot:
            throttled += s.tokens < 0
            rejected += s.rejected_topics
            labels = (s.entity.user or "", s.entity.client_id or "")
            shown.add(labels)
            self.tokens.labels(*labels).set(s.tokens)
            self.mutation_rate.labels(*labels).set(s.mutation_rate_per_s)
            self.throttle_time_ms.labels(*labels).set(s.last_throttle_ms)
            self.rate.labels(*labels).set(s.rate_per_s)
            self.rejected_topics.labels(*labels).set(s.rejected_topics)
        for labels in self._shown - shown:
            for gauge in self._gauges:
                gauge.remove(*labels)
        self._shown = shown
        self.entities.set(len(shown))
        self.throttled_entities.set(throttled)
        self.rejected_topics_overall.set(rejected)
