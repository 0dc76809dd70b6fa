"""Client quota configs in ZooKeeper, stored as Kafka stores them: the imperative shell.

Reads ``/config/users/*``, ``/config/users/*/clients/*`` and ``/config/clients/*`` with pipelined
reads; writes like ``kafka-configs`` / Kafka's ``AlterClientQuotas`` (merge the entity's config
map, then a ``/config/changes`` notification); answers ``DescribeClientQuotas``. A malformed znode
or value is reported through ``report(path, reason, kind)`` and skipped: reading never raises for
bad data, only for ZooKeeper failures (``ZkError``).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from reassignd.errors import InvalidRequest, ReassigndError
from reassignd.quotas.entities import ConfigKey
from reassignd.zk import paths
from reassignd.zk.admin_codec import decode_entity_config, encode_config_change, encode_entity_config
from reassignd.zk.client import ZkClient
from reassignd.zk.codec import CodecError
from reassignd.zk.errors import BadVersionError, MultiFailedError, NodeExistsError, NoNodeError
from reassignd.zk.reads import ZkReads
from reassignd.zk.values import Create, Op, SetData, Znode

log = logging.getLogger(__name__)

QUOTA_KEY = "controller_mutation_rate"
# Kafka's QuotaConfigs.isClientOrUserQuotaConfig: the keys DescribeClientQuotas shows.
CLIENT_QUOTA_KEYS = frozenset({"producer_byte_rate", "consumer_byte_rate", "request_percentage", QUOTA_KEY})
KIND = "quota_config"  # the ``kind`` of reports about quota config znodes

Report = Callable[[str, str, str], None]  # (path, reason, kind)

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
ALTER_ATTEMPTS = 10


def log_problem(path: str, reason: str, kind: str) -> None:
    """The default ``report``: a warning in the log."""
    log.warning("malformed %s %s skipped: %s", kind, path, reason)


class QuotaConfigError(ReassigndError):
    """An entity's config znode cannot be read, so it cannot be merged into (UNKNOWN_SERVER_ERROR)."""

    error_code = -1


# --- values and names (pure) ---------------------------------------------------------------------


def parse_rate(text: str) -> float:
    """A stored quota value (``"10.0"``, ``"1e3"``) as a float; raises ValueError with a reason.
    Must be a finite, non-negative decimal number."""
    stripped = text.strip()
    if not _DECIMAL.fullmatch(stripped):
        raise ValueError(f"not a decimal number: {text!r}")
    value = float(stripped)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"must be finite and non-negative, got {text!r}")
    return value


def format_rate(value: float) -> str:
    """How a value is stored: ``2.0`` → ``"2.0"`` (a string, as Kafka writes doubles)."""
    return repr(float(value))


def parse_entity_path(entity_path: str) -> ConfigKey | None:
    """``users/alice`` → ("alice", None), ``users/alice/clients/app`` → ("alice", "app"),
    ``clients/app`` → (None, "app"); names decoded. None for any other entity (topics, brokers)."""
    parts = entity_path.split("/")
    if not all(paths.is_znode_name(part) for part in parts):
        return None  # no such znode can exist (ZooKeeper refuses "." and ".." as names)
    if len(parts) == 2 and parts[1] and parts[0] in ("users", "clients"):
        name = paths.decode_entity_name(parts[1])
        return (name, None) if parts[0] == "users" else (None, name)
    if len(parts) == 4 and parts[0] == "users" and parts[2] == "clients" and parts[1] and parts[3]:
        return (paths.decode_entity_name(parts[1]), paths.decode_entity_name(parts[3]))
    return None


def quota_values(
    path: str, config: Mapping[str, str], report: Report, keys: Iterable[str]
) -> dict[str, float]:
    """The quota ``keys`` present in ``config``, parsed; a bad value is reported and left out."""
    values: dict[str, float] = {}
    for key in sorted(set(keys) & config.keys()):
        try:
            values[key] = parse_rate(config[key])
        except ValueError as e:
            report(path, f"{key}: {e}", KIND)
    return values


# --- reading -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EntityConfig:
    key: ConfigKey
    path: str
    config: dict[str, str]


def _decode(znode: Znode, report: Report) -> dict[str, str] | None:
    """The znode's config map; null or empty data is an empty map (Kafka writes parents so)."""
    if not znode.data:
        return {}
    try:
        return decode_entity_config(znode.data)
    except CodecError as e:
        report(znode.path, e.reason, KIND)
        return None


async def read_entity_configs(
    reads: ZkReads, report: Report = log_problem, *, user: str | None = None, client_id: str | None = None
) -> list[EntityConfig]:
    """Every quota entity's config, or only those of ``user`` and/or ``client_id`` (names as
    configured, ``"<default>"`` for a default). Pipelined: children lists, then bulk reads."""
    users, clients = paths.CONFIG_USERS, paths.CONFIG_CLIENTS
    names = [n for n in (user, client_id) if n is not None]
    if not all(paths.is_znode_name(paths.encode_entity_name(n)) for n in names):
        return []  # no such znode can exist (ZooKeeper refuses "." and ".." as names)
    client_paths: list[str] = []
    if user is not None:
        user_paths = [f"{users}/{paths.encode_entity_name(user)}"]
    else:
        listed = await reads.children_many([users] if client_id is not None else [users, clients])
        user_paths = [f"{users}/{u}" for u in sorted(listed[0] or ())]
        if client_id is None:
            client_paths = [f"{clients}/{c}" for c in sorted(listed[1] or ())]
    if client_id is None:  # the users, each user's client-ids (listed), the client-ids
        kids = await reads.children_many([f"{p}/clients" for p in user_paths])
        pair_paths = [
            f"{p}/clients/{c}" for p, names in zip(user_paths, kids, strict=True) for c in sorted(names or ())
        ]
        top_paths = [*user_paths, *client_paths]
    else:  # one client-id: under each user (or the one), and alone unless a user was given
        client = paths.encode_entity_name(client_id)
        pair_paths = [f"{p}/clients/{client}" for p in user_paths]
        top_paths = [f"{clients}/{client}"] if user is None else []

    result: list[EntityConfig] = []
    for znode in await reads.get_many([*top_paths, *pair_paths]):
        if znode is None:
            continue
        key = parse_entity_path(paths.entity_path(znode.path))
        config = _decode(znode, report)
        if key is not None and config is not None:
            result.append(EntityConfig(key, znode.path, config))
    return result


async def load_quota_configs(reads: ZkReads, report: Report = log_problem) -> dict[ConfigKey, float]:
    """Every configured ``controller_mutation_rate``: {(user, client_id): rate}, names decoded,
    ``"<default>"`` for a default, None for a component the entity does not have."""
    quotas: dict[ConfigKey, float] = {}
    for entity in await read_entity_configs(reads, report):
        values = quota_values(entity.path, entity.config, report, (QUOTA_KEY,))
        if QUOTA_KEY in values:
            quotas[entity.key] = values[QUOTA_KEY]
    return quotas


async def read_quota_entities(
    reads: ZkReads, entity_paths: Iterable[str], report: Report = log_problem
) -> dict[ConfigKey, float | None]:
    """Re-read the quota entities named by config change notifications (``users/alice``,
    ``users/alice/clients/app``, ``clients/app``; others are ignored), at the paths named: the
    rate of each, None when it has none (znode gone, or no ``controller_mutation_rate``). A
    malformed entity is reported and left out, so its previous quota stays (as in Kafka, where
    the failed notification changes nothing)."""
    named = {p: key for p in dict.fromkeys(entity_paths) if (key := parse_entity_path(p)) is not None}
    znodes = await reads.get_many([f"{paths.CONFIG}/{p}" for p in named])
    result: dict[ConfigKey, float | None] = {}
    for key, znode in zip(named.values(), znodes, strict=True):
        if znode is None:
            result[key] = None
            continue
        config = _decode(znode, report)
        if config is None:
            continue
        if QUOTA_KEY not in config:
            result[key] = None
        elif QUOTA_KEY in (values := quota_values(znode.path, config, report, (QUOTA_KEY,))):
            result[key] = values[QUOTA_KEY]
    return result


def apply_quota_updates(
    quotas: Mapping[ConfigKey, float], updates: Mapping[ConfigKey, float | None]
) -> dict[ConfigKey, float]:
    """``quotas`` with each updated entity set to its new rate, or removed when it has none."""
    result = dict(quotas)
    for key, rate in updates.items():
        if rate is None:
            result.pop(key, None)
        else:
            result[key] = rate
    return result


# --- DescribeClientQuotas ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QuotaEntry:
    """One configured entity and its quota values (``"<default>"`` names a default)."""

    user: str | None
    client_id: str | None
    values: dict[str, float]

    def entity_json(self) -> dict[str, str]:
        entity = {} if self.user is None else {"user": self.user}
        if self.client_id is not None:
            entity["client_id"] = self.client_id
        return entity

    def to_json(self) -> dict[str, object]:
        """``{"entity": {"user": "alice"}, "values": {"controller_mutation_rate": 2.0}}``."""
        return {"entity": self.entity_json(), "values": dict(self.values)}


async def describe_quotas(
    reads: ZkReads, user: str | None = None, client_id: str | None = None, report: Report = log_problem
) -> list[QuotaEntry]:
    """Kafka's DescribeClientQuotas with a non-strict filter: no arguments, every configured
    entity; ``user`` only, that user's entities (alone and with any client-id); ``client_id``
    only, that client-id's; both, that pair. Entities without a quota value are left out."""
    entries: list[QuotaEntry] = []
    for entity in await read_entity_configs(reads, report, user=user, client_id=client_id):
        values = quota_values(entity.path, entity.config, report, CLIENT_QUOTA_KEYS)
        if values:
            entries.append(QuotaEntry(entity.key[0], entity.key[1], values))
    entries.sort(key=lambda e: (e.user is not None, e.user or "", e.client_id is not None, e.client_id or ""))
    return entries


# --- AlterClientQuotas ---------------------------------------------------------------------------


# An entity's znode path is sent in its read, its write, its change notification (which names it)
# and in every watch re-registration after a reconnect; Kafka's principals and client ids are
# short. 4 KiB keeps every one of those packets far below ZooKeeper's 1 MiB (a path near 1 MiB
# makes the server drop the connection on each resend), and a few hundred such paths still fit one
# watch re-registration batch.
ENTITY_PATH_MAX_BYTES = 4096


def entity_znode(user: str | None, client_id: str | None) -> str:
    """The config znode of an entity given to AlterClientQuotas; raises InvalidRequest (42)."""
    if user is None and client_id is None:
        raise InvalidRequest("Invalid empty client quota entity")
    if user == "":
        raise InvalidRequest("Empty user not supported")
    if client_id == "":
        raise InvalidRequest("Empty client-id not supported")
    for kind, name in (("user", user), ("client-id", client_id)):
        if name is not None and not paths.is_znode_name(paths.encode_entity_name(name)):
            raise InvalidRequest(
                f"Invalid {kind} {name!r}: ZooKeeper does not take it as a znode name, so no quota can "
                "be stored for it"
            )
    path = paths.config_entity(user, client_id)
    if len(path.encode()) > ENTITY_PATH_MAX_BYTES:
        raise InvalidRequest(
            f"The quota entity's znode path would be {len(path.encode())} bytes (its names URL-encoded), "
            f"over the {ENTITY_PATH_MAX_BYTES} bytes reassignd takes: use a shorter user or client-id"
        )
    return path


async def alter_quota(
    zk: ZkClient,
    user: str | None,
    client_id: str | None,
    value: float | None,
    *,
    key: str = QUOTA_KEY,
) -> str:
    """Set (or with None, remove) one quota value of an entity, like ``kafka-configs --alter``:
    merge into the entity's config map (other keys kept; an empty map keeps the znode, as Kafka
    does), then create a ``/config/changes/config_change_`` notification, both in one multi, as
    a tool writes them (unfenced; the active controller's AlterClientQuotas runs the same loop
    through its event's fenced writes: ``controller/quotas/handlers.py``). Returns the notification's path.

    Raises InvalidRequest (42) for a bad entity or value, QuotaConfigError when the existing
    znode cannot be decoded (it is not overwritten), ZkError for ZooKeeper failures."""
    path = quota_path(user, client_id, value, key)
    for _ in range(ALTER_ATTEMPTS):
        znode = await zk.get_or_none(path)
        ops = quota_ops(path, znode, value, key)
        write = ops[0]
        try:
            results = await zk.multi(ops)
        except MultiFailedError as e:
            if isinstance(e.cause, NoNodeError) and (e.index == 1 or isinstance(write, Create)):
                await zk.ensure_path(paths.parent(ops[e.index].path))  # a missing parent
            elif not isinstance(e.cause, BadVersionError | NodeExistsError | NoNodeError):
                raise
            continue  # written or deleted meanwhile: read again
        created = results[1]
        assert isinstance(created, str)
        return created
    raise kept_changing(path)


def quota_path(user: str | None, client_id: str | None, value: float | None, key: str = QUOTA_KEY) -> str:
    """The config znode an alteration of one quota value writes; raises InvalidRequest (42)
    for a bad entity or value."""
    path = entity_znode(user, client_id)
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0
    ):
        raise InvalidRequest(f"{key} must be a finite, non-negative number, got {value!r}")
    return path


def quota_ops(path: str, znode: Znode | None, value: float | None, key: str = QUOTA_KEY) -> list[Op]:
    """The multi of one alteration of ``path`` as read (``znode``; None: absent): the entity's
    merged config map, then its change notification. Raises QuotaConfigError when the existing
    znode cannot be decoded (it is not overwritten)."""
    config: dict[str, str] = {}
    if znode is not None and znode.data:
        try:
            config = decode_entity_config(znode.data)
        except CodecError as e:
            raise QuotaConfigError(f"{path}: cannot decode the existing config ({e.reason})") from None
    if value is None:
        config.pop(key, None)
    else:
        config[key] = format_rate(value)
    data = encode_entity_config(config)
    write: Op = Create(path, data) if znode is None else SetData(path, data, znode.stat.version)
    notification = encode_config_change(paths.entity_path(path))
    return [write, Create(paths.CONFIG_CHANGE_PREFIX, notification, sequential=True)]


def kept_changing(path: str) -> QuotaConfigError:
    return QuotaConfigError(f"{path} kept changing while being altered; try again")
