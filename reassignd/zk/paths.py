"""Every ZooKeeper path of Kafka's layout (and reassignd's own), built in one place.

No other module spells a path: they call these functions. Paths are relative to the chroot, which
the client wrapper applies.
"""

from __future__ import annotations

from urllib.parse import quote, unquote_plus

CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
CLUSTER = "/cluster"
CLUSTER_ID = "/cluster/id"

BROKERS = "/brokers"
BROKER_IDS = "/brokers/ids"
BROKER_TOPICS = "/brokers/topics"
BROKER_SEQID = "/brokers/seqid"

ADMIN = "/admin"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
REASSIGN_PARTITIONS_EXTRA = "/admin/reassign_partitions_extra"
REASSIGN_CANCEL = "/admin/reassign_cancel"
REASSIGNMENT_REQUESTS = "/admin/reassignment_requests"
REASSIGNMENT_REQUEST_PREFIX = "/admin/reassignment_requests/request_"
REASSIGNMENTS = "/admin/reassignments"
DELETE_TOPICS = "/admin/delete_topics"
PREFERRED_REPLICA_ELECTION = "/admin/preferred_replica_election"  # Kafka's legacy election request

ISR_CHANGE_NOTIFICATION = "/isr_change_notification"
ISR_CHANGE_PREFIX = "/isr_change_notification/isr_change_"

CONFIG = "/config"
CONFIG_TOPICS = "/config/topics"
CONFIG_BROKERS = "/config/brokers"
CONFIG_USERS = "/config/users"
CONFIG_CLIENTS = "/config/clients"
CONFIG_CHANGES = "/config/changes"
CONFIG_CHANGE_PREFIX = "/config/changes/config_change_"

DEFAULT_ENTITY = "<default>"

# Kafka's roots reassignd does not write, but whose ACLs ``admin zk-acls`` migrates as Kafka's
# ZkSecurityMigrator does (ZkData.SecureRootPaths)
LOG_DIR_EVENT_NOTIFICATION = "/log_dir_event_notification"
LATEST_PRODUCER_ID_BLOCK = "/latest_producer_id_block"
FEATURE = "/feature"
DELEGATION_TOKEN = "/delegation_token"
KAFKA_ACL_ROOTS = ("/kafka-acl", "/kafka-acl-changes", "/kafka-acl-extended", "/kafka-acl-extended-changes")

REASSIGND = "/reassignd"
LEGACY_OVERFLOW = "/reassignd/legacy_overflow"  # legacy entries beyond 1 MiB (chunk_N children)

# Persistent parents the controller makes sure exist when it becomes active (as Kafka's
# KafkaZkClient.createTopLevelPaths does for its own).
PERSISTENT_PATHS: tuple[str, ...] = (
    BROKER_IDS,
    BROKER_TOPICS,
    ADMIN,
    DELETE_TOPICS,
    REASSIGNMENT_REQUESTS,
    REASSIGNMENTS,
    ISR_CHANGE_NOTIFICATION,
    CONFIG_TOPICS,
    CONFIG_BROKERS,
    CONFIG_USERS,
    CONFIG_CLIENTS,
    CONFIG_CHANGES,
    CLUSTER,
    REASSIGND,
    f"{REASSIGND}/origins",
    f"{REASSIGND}/demotions",
    f"{REASSIGND}/self_healing",
)


# The subtrees whose ACLs ``admin zk-acls`` re-sets, with the root itself (the chroot's): Kafka's
# ZkData.SecureRootPaths, then reassignd's own root. /consumers is left alone, as Kafka does (its
# znodes stay open to consumers of any principal).
SECURE_ROOT_PATHS: tuple[str, ...] = (
    ADMIN,
    BROKERS,
    CLUSTER,
    CONFIG,
    CONTROLLER,
    CONTROLLER_EPOCH,
    ISR_CHANGE_NOTIFICATION,
    LATEST_PRODUCER_ID_BLOCK,
    LOG_DIR_EVENT_NOTIFICATION,
    DELEGATION_TOKEN,
    FEATURE,
    *KAFKA_ACL_ROOTS,
    REASSIGND,
)

ORIGINS = f"{REASSIGND}/origins"


def topic_origins(name: str) -> str:
    """reassignd's record of each moving partition's replicas before its move, in their order."""
    return f"{ORIGINS}/{name}"


DEMOTIONS = f"{REASSIGND}/demotions"
SELF_HEALING = f"{REASSIGND}/self_healing"


def demotion(broker_id: int) -> str:
    """A demoted broker's record (``demoted_at_ms``); its children hold each topic's orders."""
    return f"{DEMOTIONS}/{broker_id}"


def demotion_topic(broker_id: int, topic: str) -> str:
    """The replica orders, before the demotion of ``broker_id``, of ``topic``'s partitions it
    reordered (what ``promote`` restores)."""
    return f"{DEMOTIONS}/{broker_id}/{topic}"


def lost_broker(broker_id: int) -> str:
    """Self-healing's record of a lost broker: when the controller saw it go."""
    return f"{SELF_HEALING}/{broker_id}"


def broker(broker_id: int) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic(name: str) -> str:
    return f"{BROKER_TOPICS}/{name}"


def topic_partitions(name: str) -> str:
    return f"{BROKER_TOPICS}/{name}/partitions"


def partition(name: str, partition_id: int) -> str:
    return f"{BROKER_TOPICS}/{name}/partitions/{partition_id}"


def partition_state(name: str, partition_id: int) -> str:
    return f"{BROKER_TOPICS}/{name}/partitions/{partition_id}/state"


def delete_topic(name: str) -> str:
    return f"{DELETE_TOPICS}/{name}"


def reassignment_request(name: str) -> str:
    """`name` is a child of /admin/reassignment_requests (e.g. ``request_0000000003``)."""
    return f"{REASSIGNMENT_REQUESTS}/{name}"


def reassignment_status_topic(name: str) -> str:
    return f"{REASSIGNMENTS}/{name}"


def reassignment_status(name: str, partition_id: int) -> str:
    return f"{REASSIGNMENTS}/{name}/{partition_id}"


def isr_change(name: str) -> str:
    """`name` is a child of /isr_change_notification (e.g. ``isr_change_0000000001``)."""
    return f"{ISR_CHANGE_NOTIFICATION}/{name}"


def config_change(name: str) -> str:
    return f"{CONFIG_CHANGES}/{name}"


def config_topic(name: str) -> str:
    return f"{CONFIG_TOPICS}/{name}"


def config_broker(broker_id: int | None) -> str:
    """`None` names the cluster-wide default (``/config/brokers/<default>``)."""
    return f"{CONFIG_BROKERS}/{DEFAULT_ENTITY if broker_id is None else broker_id}"


def _escapes_default(name: str) -> bool:
    """``<default>``, ``<<default>``, …: the names whose spelling takes one more ``<``."""
    return name.startswith("<") and name.lstrip("<") == "default>"


def spell_entity_name(name: str | None) -> str:
    """How reassignd spells a quota entity name given as Kafka's wire gives it (None = the
    default): the default is ``<default>``, a literal name is itself, except that a name made of
    ``<``s then ``default>`` takes one more ``<`` (a client-id literally called ``<default>`` is
    spelled ``<<default>``), so that every name, the default included, has one spelling. The HTTP
    API, the controller's events and the quota keys all use this spelling."""
    if name is None:
        return DEFAULT_ENTITY
    return "<" + name if _escapes_default(name) else name


def literal_entity_name(spelled: str) -> str | None:
    """The inverse of `spell_entity_name`: None for the default, else the literal name."""
    if spelled == DEFAULT_ENTITY:
        return None
    return spelled[1:] if _escapes_default(spelled) else spelled


def sanitize(name: str) -> str:
    """Kafka's `Sanitizer.sanitize` of a literal name: URL-encode (space as %20), with `*` as %2A
    and `~` as %7E. ``<default>`` is ``%3Cdefault%3E``: a literal name is never the default."""
    return quote(name, safe="").replace("*", "%2A").replace("~", "%7E")


def encode_entity_name(spelled: str) -> str:
    """The znode name of a spelled entity name (`spell_entity_name`): ``<default>`` for the
    default (Kafka's `ConfigEntityName.Default`), else the literal name sanitized as Kafka does."""
    literal = literal_entity_name(spelled)
    return DEFAULT_ENTITY if literal is None else sanitize(literal)


def is_znode_name(name: str) -> bool:
    """Whether ZooKeeper takes ``name`` as one path element: not empty, not ``.`` or ``..``
    (it answers BADARGUMENTS to those). Sanitized entity names have no other forbidden
    character: URL encoding leaves only ASCII letters, digits and ``-._``."""
    return name not in ("", ".", "..")


def decode_entity_name(stored: str) -> str:
    """The spelled name of a znode name: ``<default>`` is the default, any other is desanitized
    (Kafka's `Sanitizer.desanitize`: URL-decoding, ``+`` as a space) and spelled."""
    if stored == DEFAULT_ENTITY:
        return DEFAULT_ENTITY
    return spell_entity_name(unquote_plus(stored))


def config_entity(user: str | None, client_id: str | None) -> str:
    """The config znode of a (user, client-id) quota entity, names spelled (`spell_entity_name`:
    `<default>` names a default).

    ``entity_path`` of a config change notification is this path without the ``/config/`` prefix.
    """
    if user is not None and client_id is not None:
        return f"{CONFIG_USERS}/{encode_entity_name(user)}/clients/{encode_entity_name(client_id)}"
    if user is not None:
        return f"{CONFIG_USERS}/{encode_entity_name(user)}"
    if client_id is not None:
        return f"{CONFIG_CLIENTS}/{encode_entity_name(client_id)}"
    raise ValueError("a quota entity needs a user, a client-id or both")


def entity_path(path: str) -> str:
    """`/config/users/alice` -> `users/alice` (the form config change notifications carry)."""
    if not path.startswith(CONFIG + "/") or path == CONFIG + "/":
        raise ValueError(f"not a config path: {path}")
    return path[len(CONFIG) + 1 :]


def parent(path: str) -> str:
    head, _, _ = path.rpartition("/")
    return head or "/"


def basename(path: str) -> str:
    return path.rpartition("/")[2]
