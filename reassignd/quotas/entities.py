"""Quota entities and Kafka's precedence (``ClientQuotaManager.DefaultQuotaCallback``). Pure.

A configured quota is keyed as it is stored: ``(user, client_id)`` with decoded names as
reassignd spells them (``zk.paths.spell_entity_name``: ``"<default>"`` for a default, a client-id
literally called ``<default>`` is ``"<<default>"``) and None for a component the entity does not
have — ``("alice", None)`` is ``/config/users/alice``, ``(None, "<default>")`` is
``/config/clients/<default>``, ``(None, "<<default>")`` is ``/config/clients/%3Cdefault%3E``.

A request (user, client-id) takes the first configured match of Kafka's precedence list (KIP-599, as for client quotas). Its bucket is
the matched entity with each ``<default>`` replaced by the request's own name, as Kafka's quota
metric tags are: a default quota is a quota *per* user (or client-id, or pair), so every user
under ``/config/users/<default>`` has a bucket of their own, while all client-ids of alice under
``/config/users/alice`` share hers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reassignd.zk.paths import DEFAULT_ENTITY, spell_entity_name

DEFAULT = DEFAULT_ENTITY  # "<default>"

ConfigKey = tuple[str | None, str | None]  # (user, client_id) as stored; None = not part of it


@dataclass(frozen=True, slots=True)
class QuotaIdentity:
    """The identity of one bucket: a user, a client-id or both (None = not part of it)."""

    user: str | None
    client_id: str | None

    @property
    def labels(self) -> dict[str, str]:
        """Prometheus labels, as Kafka's metric tags: ``""`` for a missing component."""
        return {"user": self.user or "", "client_id": self.client_id or ""}


@dataclass(frozen=True, slots=True)
class Resolution:
    """Which configured quota applies to a request, and the bucket it is charged to."""

    level: int  # 1..8, Kafka's quota precedence (9 = unlimited is ``None``)
    config_key: ConfigKey
    entity: QuotaIdentity
    rate_per_s: float


def candidates(user: str, client_id: str) -> tuple[tuple[ConfigKey, QuotaIdentity], ...]:
    """The eight configured entities a request may match, first match wins, each with the
    bucket it would be charged to. ``user`` and ``client_id`` are the request's literal names
    (a client-id literally called ``<default>`` is not the default: Kafka sanitizes it)."""
    u, c = spell_entity_name(user), spell_entity_name(client_id)
    return (
        ((u, c), QuotaIdentity(user, client_id)),  # 1. /config/users/<user>/clients/<client-id>
        ((u, DEFAULT), QuotaIdentity(user, client_id)),  # 2. /config/users/<user>/clients/<default>
        ((u, None), QuotaIdentity(user, None)),  # 3. /config/users/<user>
        ((DEFAULT, c), QuotaIdentity(user, client_id)),  # 4. /config/users/<default>/clients/<client-id>
        ((DEFAULT, DEFAULT), QuotaIdentity(user, client_id)),  # 5. /config/users/<default>/clients/<default>
        ((DEFAULT, None), QuotaIdentity(user, None)),  # 6. /config/users/<default>
        ((None, c), QuotaIdentity(None, client_id)),  # 7. /config/clients/<client-id>
        ((None, DEFAULT), QuotaIdentity(None, client_id)),  # 8. /config/clients/<default>
    )


def resolve(quotas: Mapping[ConfigKey, float], user: str, client_id: str) -> Resolution | None:
    """The first configured match for (user, client-id), or None: unlimited (no bucket)."""
    for level, (key, entity) in enumerate(candidates(user, client_id), start=1):
        rate = quotas.get(key)
        if rate is not None:
            return Resolution(level, key, entity, rate)
    return None


def entity_quota(quotas: Mapping[ConfigKey, float], entity: QuotaIdentity) -> Resolution | None:
    """The quota an existing bucket has after a config change (Kafka's ``quotaLimit(tags)``):
    the first configured match among the levels that charge this kind of bucket — 1, 2, 4, 5 for
    a (user, client-id) bucket, 3, 6 for a user's, 7, 8 for a client-id's. None: the bucket no
    longer has a quota."""
    u = None if entity.user is None else spell_entity_name(entity.user)
    c = None if entity.client_id is None else spell_entity_name(entity.client_id)
    if u is not None and c is not None:
        levels: tuple[tuple[int, ConfigKey], ...] = (
            (1, (u, c)),
            (2, (u, DEFAULT)),
            (4, (DEFAULT, c)),
            (5, (DEFAULT, DEFAULT)),
        )
    elif u is not None:
        levels = ((3, (u, None)), (6, (DEFAULT, None)))
    elif c is not None:
        levels = ((7, (None, c)), (8, (None, DEFAULT)))
    else:
        return None
    for level, key in levels:
        rate = quotas.get(key)
        if rate is not None:
            return Resolution(level, key, entity, rate)
    return None


def describe_key(key: ConfigKey) -> str:
    """``user=alice, client-id=<default>`` — for logs and error messages."""
    parts = [f"user={key[0]}"] if key[0] is not None else []
    if key[1] is not None:
        parts.append(f"client-id={key[1]}")
    return ", ".join(parts) or "(no entity)"
