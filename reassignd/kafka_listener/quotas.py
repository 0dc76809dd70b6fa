"""DescribeClientQuotas and AlterClientQuotas (KIP-546) for ``controller_mutation_rate``, with the
HTTP API's rules: entities ``user`` and ``client-id`` (a null name is the default), only the
KIP-599 key may be altered, each entry answered on its own; describe reads ZooKeeper on any
instance, alter goes through the controller's event queue.
"""

from __future__ import annotations

import json
from typing import Any

from kafka.protocol.admin import AlterClientQuotasResponse, DescribeClientQuotasResponse

from reassignd.controller.model.admission import quota_entry_error
from reassignd.controller.model.requests import (
    AlterQuotas,
    QuotaAlterationResult,
    QuotaChange,
    QuotaDescription,
)
from reassignd.errors import InvalidRequest, NotController
from reassignd.kafka_listener.context import CLUSTER_AUTHORIZATION_FAILED, NOT_CONTROLLER, RequestContext
from reassignd.quotas.config_store import QUOTA_KEY, quota_path
from reassignd.zk.paths import DEFAULT_ENTITY, literal_entity_name, spell_entity_name

USER = "user"
CLIENT_ID = "client-id"
MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2
INVALID_REQUEST = 42


def _name(spelled: str) -> str | None:
    """The wire's entity name: the default is null, any other the literal name (a client-id
    literally called ``<default>``, stored ``%3Cdefault%3E``, is ``"<default>"``)."""
    return literal_entity_name(spelled)


def _matches(stored: str | None, match_type: int, match: str | None) -> bool:
    if match_type == MATCH_EXACT:  # a literal name, never the default (Kafka sanitizes it)
        return stored is not None and match is not None and stored == spell_entity_name(match)
    if match_type == MATCH_DEFAULT:
        return stored == DEFAULT_ENTITY
    return stored is not None  # any name, the default included


def filter_quotas(
    descriptions: tuple[QuotaDescription, ...], components: list[Any], strict: bool
) -> list[QuotaDescription] | tuple[int, str]:
    """Kafka's ClientQuotaFilter over the configured entities, or (error, message)."""
    wanted: dict[str, tuple[int, str | None]] = {}
    for c in components:
        if c.entity_type not in (USER, CLIENT_ID):
            return (INVALID_REQUEST, f"Custom entity type '{c.entity_type}' not supported")
        if c.entity_type in wanted:
            return (INVALID_REQUEST, f"Duplicate {c.entity_type} filter component entity type")
        if c.match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY):
            return (INVALID_REQUEST, f"Unexpected match type {c.match_type}")
        wanted[c.entity_type] = (c.match_type, c.match)
    out = []
    for d in descriptions:
        values = {USER: d.user, CLIENT_ID: d.client_id}
        if not all(_matches(values[t], m, name) for t, (m, name) in wanted.items()):
            continue
        if strict and any(values[t] is not None for t in (USER, CLIENT_ID) if t not in wanted):
            continue
        out.append(d)
    return out


async def describe_client_quotas(ctx: RequestContext, request: Any) -> Any:
    Entry = DescribeClientQuotasResponse.EntryData
    Entity = Entry.EntityData
    Value = Entry.ValueData
    found = filter_quotas(await ctx.api.describe_quotas(None, None), list(request.components), request.strict)
    if isinstance(found, tuple):
        return DescribeClientQuotasResponse(
            throttle_time_ms=0, error_code=found[0], error_message=found[1], entries=None
        )
    entries = []
    for d in found:
        entity = []
        if d.user is not None:
            entity.append(Entity(entity_type=USER, entity_name=_name(d.user)))
        if d.client_id is not None:
            entity.append(Entity(entity_type=CLIENT_ID, entity_name=_name(d.client_id)))
        entries.append(Entry(entity=entity, values=[Value(key=k, value=v) for k, v in d.values]))
    return DescribeClientQuotasResponse(throttle_time_ms=0, error_code=0, error_message=None, entries=entries)


def plan_entry(entry: Any) -> QuotaChange | QuotaAlterationResult:
    """What to send the controller for one entry, or its answer when decided here."""
    user: str | None = None
    client_id: str | None = None
    for e in entry.entity:
        name = spell_entity_name(e.entity_name)  # None is the default, a string its literal name
        if e.entity_type == USER and user is None:
            user = name
        elif e.entity_type == CLIENT_ID and client_id is None:
            client_id = name
        else:
            return QuotaAlterationResult(
                user, client_id, INVALID_REQUEST, f"Unsupported or repeated entity type {e.entity_type!r}"
            )
    keys = [op.key for op in entry.ops]
    for key in keys:
        if key != QUOTA_KEY:
            message = f"Unsupported quota key {json.dumps(key)}: only {QUOTA_KEY} can be altered"
            return QuotaAlterationResult(user, client_id, INVALID_REQUEST, message)
        if keys.count(key) > 1:
            return QuotaAlterationResult(
                user, client_id, INVALID_REQUEST, f"Duplicate quota key {key} in the entry's ops"
            )
    value = None if not entry.ops or entry.ops[0].remove else float(entry.ops[0].value)
    try:  # the entity and the value, checked here so validate_only answers the same errors
        quota_path(user, client_id, value)
    except InvalidRequest as err:
        return QuotaAlterationResult(user, client_id, err.error_code, err.message)
    if not entry.ops:
        return QuotaAlterationResult(user, client_id)
    return QuotaChange(user, client_id, value)


async def alter_client_quotas(ctx: RequestContext, request: Any) -> Any:
    plans = [plan_entry(e) for e in request.entries]
    sent = tuple(p for p in plans if isinstance(p, QuotaChange))
    answers: list[QuotaAlterationResult]
    if not ctx.may_alter:
        message = ctx.denied_message("ALTER client quotas")
        answers = [
            QuotaAlterationResult(p.user, p.client_id, CLUSTER_AUTHORIZATION_FAILED, message) for p in sent
        ]
    elif request.validate_only:  # the door's checks, values included, and nothing sent
        answers = [
            QuotaAlterationResult(p.user, p.client_id)
            if (e := quota_entry_error(p)) is None
            else QuotaAlterationResult(p.user, p.client_id, e.error_code, e.message)
            for p in sent
        ]
    else:
        try:
            answers = list(await ctx.api.alter_quotas(AlterQuotas(sent)))
        except NotController as e:
            answers = [QuotaAlterationResult(p.user, p.client_id, NOT_CONTROLLER, e.message) for p in sent]
    it = iter(answers)
    results = [next(it) if isinstance(p, QuotaChange) else p for p in plans]
    Entry = AlterClientQuotasResponse.EntryData
    Entity = Entry.EntityData
    out = []
    for r in results:
        entity = []
        if r.user is not None:
            entity.append(Entity(entity_type=USER, entity_name=_name(r.user)))
        if r.client_id is not None:
            entity.append(Entity(entity_type=CLIENT_ID, entity_name=_name(r.client_id)))
        out.append(Entry(error_code=r.error_code, error_message=r.error_message, entity=entity))
    return AlterClientQuotasResponse(throttle_time_ms=0, entries=out)


# --- the answers to a request that failed --------------------------------------------------------


def describe_client_quotas_refusal(request: Any, version: int, code: int, message: str) -> Any:
    return DescribeClientQuotasResponse(
        throttle_time_ms=0, error_code=code, error_message=message, entries=None
    )


def alter_client_quotas_refusal(request: Any, version: int, code: int, message: str) -> Any:
    """Each entry answered ``code``, its entity echoed as sent."""
    Entry = AlterClientQuotasResponse.EntryData
    Entity = Entry.EntityData
    return AlterClientQuotasResponse(
        throttle_time_ms=0,
        entries=[
            Entry(
                error_code=code,
                error_message=message,
                entity=[Entity(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity],
            )
            for entry in request.entries
        ],
    )
