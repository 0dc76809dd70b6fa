"""What ``GET /metrics`` shows a caller. Everything to a caller with a token (any role) or when
the controller runs without a tokens file; without a token, everything but the families that name
quota users, client ids or batches (:data:`NAMED_FAMILIES`), whose counts stay visible through
their unlabelled sums (``reassignd_quota_entities``, ``reassignd_batches_bytes_remaining``...).
A scrape configured with a viewer token sees the names; a wrong token is 401, as on any route."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from reassignd.http import auth
from reassignd.http.batch_metrics import NAMED_FAMILIES as BATCH_FAMILIES
from reassignd.quotas.metrics import NAMED_FAMILIES as QUOTA_FAMILIES

NAMED_FAMILIES = QUOTA_FAMILIES | BATCH_FAMILIES


class WithoutNames(Collector):
    """A registry's families but the named ones."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        return (m for m in self.registry.collect() if m.name not in NAMED_FAMILIES)


def shows_names(tokens: Mapping[str, auth.Principal] | None, authorization: str | None) -> bool:
    """Whether the caller sees the named families; raises AuthenticationFailed (401) for a
    token given but unknown."""
    if tokens is None:
        return True
    if authorization is None:
        return False
    auth.authorize(auth.authenticate(tokens, authorization), auth.Role.VIEWER)
    return True


def exposed(registry: CollectorRegistry, names: bool) -> Collector:
    return registry if names else WithoutNames(registry)
