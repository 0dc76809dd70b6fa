"""The controller-mutation quota manager (Kafka's ``ControllerMutationQuotaManager``). Pure.

Holds the configured quotas and one :class:`TokenBucket` per quota entity; every decision takes
the time as an argument. The shell loads the configuration (``config_store``), calls
:meth:`QuotaManager.set_quotas` after every change, and charges the topics of each CreateTopics,
CreatePartitions or DeleteTopics request with :meth:`QuotaManager.charge_in_order`.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reassignd.quotas.entities import ConfigKey, QuotaIdentity, Resolution, entity_quota, resolve
from reassignd.quotas.token_bucket import ADMITTED, Admission, TokenBucket, burst

IDLE_EXPIRY_S = 3600.0  # Kafka's ClientQuotaManager.InactiveSensorExpirationTimeSeconds
_SWEEP_EVERY_S = 60.0


@dataclass(frozen=True, slots=True)
class EntitySnapshot:
    """One bucket's state at a moment, for metrics and status pages."""

    entity: QuotaIdentity
    config_key: ConfigKey  # the configured quota it is charged under
    rate_per_s: float  # controller_mutation_rate
    burst: float
    tokens: float  # refilled to the moment; may be negative
    throttle_ms: int  # the current throttle (0 while tokens ≥ 0)
    last_throttle_ms: int  # the throttle of the last rejection (0 if none yet)
    mutation_rate_per_s: float  # admitted partition mutations per second over the quota window
    rejected_topics: int  # topics rejected since the bucket was created


@dataclass(slots=True)
class _Bucket:
    config_key: ConfigKey
    bucket: TokenBucket
    last_used_s: float
    last_throttle_ms: int = 0
    rejected_topics: int = 0
    admitted: deque[tuple[float, float]] = field(default_factory=deque)  # (time, mutations)


class QuotaManager:
    """Token buckets per quota entity, in strict mode (the only mode of the HTTP API)."""

    def __init__(
        self, window_num: int = 11, window_size_s: float = 1.0, idle_expiry_s: float = IDLE_EXPIRY_S
    ) -> None:
        if window_num < 1 or not window_size_s > 0 or not idle_expiry_s > 0:
            raise ValueError("window_num, window_size_s and idle_expiry_s must be positive")
        self.window_num = window_num
        self.window_size_s = window_size_s
        self.idle_expiry_s = idle_expiry_s
        self._quotas: dict[ConfigKey, float] = {}
        self._buckets: dict[QuotaIdentity, _Bucket] = {}
        self._last_sweep_s: float | None = None

    @property
    def window_s(self) -> float:
        return self.window_num * self.window_size_s

    @property
    def quotas(self) -> Mapping[ConfigKey, float]:
        """The configured quotas (a copy)."""
        return dict(self._quotas)

    def burst(self, rate_per_s: float) -> float:
        return burst(rate_per_s, self.window_num, self.window_size_s)

    # --- configuration ---------------------------------------------------------------------------

    def set_quotas(self, quotas: Mapping[ConfigKey, float]) -> None:
        """Replace the configuration. A bucket whose entity still has a quota keeps its tokens
        (capped at the new burst at its next refill, as Kafka changes a sensor's quota); a
        bucket left without one is dropped."""
        for key, rate in quotas.items():
            if not (math.isfinite(rate) and rate >= 0):
                raise ValueError(f"quota {key}: rate {rate} must be finite and non-negative")
        self._quotas = dict(quotas)
        for entity, state in list(self._buckets.items()):
            found = entity_quota(self._quotas, entity)
            if found is None:
                del self._buckets[entity]
            else:
                self._retarget(state, found)

    def resolve(self, user: str, client_id: str) -> Resolution | None:
        """The quota that applies to (user, client-id), or None (unlimited)."""
        return resolve(self._quotas, user, client_id)

    # --- admission -------------------------------------------------------------------------------

    def admit(self, user: str, client_id: str, partitions: int, now_s: float) -> Admission:
        """Charge one topic of ``partitions`` mutations: rejected (with its throttle) while the
        entity's tokens are below zero, otherwise admitted and charged in full."""
        if partitions < 0:
            raise ValueError(f"cannot charge {partitions} partition mutations")
        self._maybe_sweep(now_s)
        found = self.resolve(user, client_id)
        if found is None:
            return ADMITTED
        state = self._bucket(found, now_s)
        state.last_used_s = max(state.last_used_s, now_s)
        admission = state.bucket.try_admit(partitions, now_s)
        if admission.admitted:
            if partitions:
                state.admitted.append((now_s, partitions))
        else:
            state.last_throttle_ms = admission.throttle_ms
            state.rejected_topics += 1
        return admission

    def record(self, user: str, client_id: str, partitions: int, now_s: float) -> int:
        """Permissive charging (Kafka's PermissiveControllerMutationQuota, for requests below the
        versions where the quota is strict): charge ``partitions`` without refusing them; the
        throttle the entity is in afterwards (0 while its tokens are not below zero)."""
        if partitions < 0:
            raise ValueError(f"cannot charge {partitions} partition mutations")
        self._maybe_sweep(now_s)
        found = self.resolve(user, client_id)
        if found is None:
            return 0
        state = self._bucket(found, now_s)
        state.last_used_s = max(state.last_used_s, now_s)
        state.bucket.refill(now_s)
        state.bucket.tokens -= partitions
        if partitions:
            state.admitted.append((now_s, partitions))
        return state.bucket.throttle_ms(now_s)

    def charge_in_order(
        self, user: str, client_id: str, items: Sequence[int], now_s: float
    ) -> list[Admission]:
        """Charge the topics of one request in request order (``items`` = partition mutations
        per topic that passed validation); one admission per item."""
        return [self.admit(user, client_id, n, now_s) for n in items]

    def throttle_ms(self, user: str, client_id: str, now_s: float) -> int:
        """The entity's current throttle (0 when unlimited or not throttled)."""
        found = self.resolve(user, client_id)
        state = None if found is None else self._buckets.get(found.entity)
        if state is None or self._idle(state, now_s):
            return 0
        return state.bucket.throttle_ms(now_s)

    # --- housekeeping and reading ----------------------------------------------------------------

    def expire_idle(self, now_s: float) -> list[QuotaIdentity]:
        """Drop the buckets unused for ``idle_expiry_s``; returns their entities."""
        gone = [entity for entity, state in self._buckets.items() if self._idle(state, now_s)]
        for entity in gone:
            del self._buckets[entity]
        self._last_sweep_s = now_s
        return gone

    def snapshot(self, now_s: float) -> tuple[EntitySnapshot, ...]:
        """Every live bucket, refilled to ``now_s`` (nothing is changed), sorted by entity."""
        result: list[EntitySnapshot] = []
        for entity in sorted(self._buckets, key=_sort_key):
            state = self._buckets[entity]
            if self._idle(state, now_s):
                continue
            bucket = state.bucket
            start = now_s - self.window_s
            recent = sum(n for t, n in state.admitted if t > start)
            result.append(
                EntitySnapshot(
                    entity=entity,
                    config_key=state.config_key,
                    rate_per_s=bucket.rate_per_s,
                    burst=bucket.burst,
                    tokens=bucket.tokens_at(now_s),
                    throttle_ms=bucket.throttle_ms(now_s),
                    last_throttle_ms=state.last_throttle_ms,
                    mutation_rate_per_s=recent / self.window_s,
                    rejected_topics=state.rejected_topics,
                )
            )
        return tuple(result)

    def _bucket(self, found: Resolution, now_s: float) -> _Bucket:
        state = self._buckets.get(found.entity)
        if state is None or self._idle(state, now_s):
            bucket = TokenBucket(found.rate_per_s, self.burst(found.rate_per_s))
            state = _Bucket(found.config_key, bucket, last_used_s=now_s)
            self._buckets[found.entity] = state
        else:
            self._retarget(state, found)
        start = now_s - self.window_s
        while state.admitted and state.admitted[0][0] <= start:
            state.admitted.popleft()
        return state

    def _retarget(self, state: _Bucket, found: Resolution) -> None:
        state.config_key = found.config_key
        if state.bucket.rate_per_s != found.rate_per_s:
            state.bucket.set_rate(found.rate_per_s, self.burst(found.rate_per_s))

    def _idle(self, state: _Bucket, now_s: float) -> bool:
        return now_s - state.last_used_s >= self.idle_expiry_s

    def _maybe_sweep(self, now_s: float) -> None:
        if self._last_sweep_s is None or now_s - self._last_sweep_s >= _SWEEP_EVERY_S:
            self.expire_idle(now_s)


def response_throttle_ms(admissions: Sequence[Admission], charged_at_s: float, now_s: float) -> int:
    """A response's ``throttle_time_ms``: the last rejection's throttle less the time since the
    topics were charged (Kafka's ``AbstractControllerMutationQuota.throttleTime``), never below
    0; 0 when nothing was rejected, even if the tokens went negative."""
    rejected = [a.throttle_ms for a in admissions if not a.admitted]
    if not rejected:
        return 0
    elapsed_ms = max(0, math.floor((now_s - charged_at_s) * 1000.0))
    return max(0, rejected[-1] - elapsed_ms)


def _sort_key(entity: QuotaIdentity) -> tuple[str, str, bool, bool]:
    return (entity.user or "", entity.client_id or "", entity.user is None, entity.client_id is None)
