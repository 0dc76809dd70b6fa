"""DescribeClientQuotas and AlterClientQuotas (KIP-546) for ``controller_mutation_rate``, with the
HTTP API's rules: entities ``user`` and ``client-id`` (a null name is the default), only the
KIP-599 key may be altered, each entry answered on its own; describe reads ZooKeeper on any
instance, alter goes through the controller's event queue.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import AlterClientQuotasResponse, DescribeClientQuotasResponse

from reassignd.controller.model.admission import quota_entry_error
from reassignd.controller.model.from_contracts import merge_quota_results, quota_entry_of
from reassignd.controller.model.requests import (
    AlterQuotas,
    QuotaAlterationResult,
    QuotaChange,
    QuotaDescription,
)
from reassignd.errors import NotController
from reassignd.kafka_listener import door
from reassignd.kafka_listener.context import CLUSTER_AUTHORIZATION_FAILED, NOT_CONTROLLER, RequestContext
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


def _entity(Entity: Any, user: str | None, client_id: str | None) -> list[Any]:
    """An entity on the wire (``Entity``: the answer's EntityData class), as spelled names come."""
    entity = []
    if user is not None:
        entity.append(Entity(entity_type=USER, entity_name=_name(user)))
    if client_id is not None:
        entity.append(Entity(entity_type=CLIENT_ID, entity_name=_name(client_id)))
    return entity


async def describe_client_quotas(ctx: RequestContext, request: Any) -> Any:
    Entry = DescribeClientQuotasResponse.EntryData
    Entity = Entry.EntityData
    Value = Entry.ValueData
    found = filter_quotas(await ctx.api.describe_quotas(None, None), list(request.components), request.strict)
    if isinstance(found, tuple):
        return DescribeClientQuotasResponse(
            throttle_time_ms=0, error_code=found[0], error_message=found[1], entries=None
        )
    entries = [
        Entry(
            entity=_entity(Entity, d.user, d.client_id), values=[Value(key=k, value=v) for k, v in d.values]
        )
        for d in found
    ]
    return DescribeClientQuotasResponse(throttle_time_ms=0, error_code=0, error_message=None, entries=entries)


def plan_entry(entry: Any) -> QuotaChange | QuotaAlterationResult:
    """What to send the controller for one entry, or its answer when decided here: by the HTTP
    API's planner (:func:`~reassignd.controller.model.from_contracts.quota_entry_of`), once the
    entry is converted into its contract struct; then its value, by the controller's own check
    (``admission.quota_entry_error``), so that a bad value is answered 42 before any refusal of
    the whole request (a viewer's 31, a standby's 41) and validate_only answers what the
    controller would."""
    converted = door.quota_alteration(entry)
    if isinstance(converted, QuotaAlterationResult):  # an entity type Kafka's wire alone can carry
        return converted
    planned = quota_entry_of(converted)
    if isinstance(planned, QuotaChange) and (error := quota_entry_error(planned)) is not None:
        return QuotaAlterationResult(planned.user, planned.client_id, error.error_code, error.message)
    return planned


async def alter_client_quotas(ctx: RequestContext, request: Any) -> Any:
    plans = [plan_entry(e) for e in request.entries]
    sent = tuple(p for p in plans if isinstance(p, QuotaChange))
    answers: list[QuotaAlterationResult]
    if not ctx.may_alter:
        message = ctx.denied_message("ALTER client quotas")
        answers = [
            QuotaAlterationResult(p.user, p.client_id, CLUSTER_AUTHORIZATION_FAILED, message) for p in sent
        ]
    elif request.validate_only:  # every entry planned passed the door's checks; nothing is sent
        answers = [QuotaAlterationResult(p.user, p.client_id) for p in sent]
    else:
        try:
            answers = list(await ctx.api.alter_quotas(AlterQuotas(sent)))
        except NotController as e:
            answers = [QuotaAlterationResult(p.user, p.client_id, NOT_CONTROLLER, e.message) for p in sent]
    results = merge_quota_results(plans, answers)
    Entry = AlterClientQuotasResponse.EntryData
    Entity = Entry.EntityData
    out = [
        Entry(
            error_code=r.error_code,
            error_message=r.error_message,
            entity=_entity(Entity, r.user, r.client_id),
        )
        for r in results
    ]
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
