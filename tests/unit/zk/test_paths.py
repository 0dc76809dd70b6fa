"""ZooKeeper paths: Kafka's layout, and quota entity names encoded as Kafka's Sanitizer does."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reassignd.zk import paths
from reassignd.zk.admin_codec import decode_config_change, encode_config_change


def kafka_sanitize(name: str) -> str:
    """Kafka's ``Sanitizer.sanitize``: ``java.net.URLEncoder`` (UTF-8, which keeps only ASCII
    letters, digits and ``.-*_``, and writes a space as ``+``), then ``*`` -> %2A, ``+`` -> %20."""
    return "".join(
        ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "".join(f"%{b:02X}" for b in ch.encode())
        for ch in name
    )


names = st.text(min_size=1)  # any literal name, ``<default>`` included (Kafka sanitizes it too)
# names near the default's spelling, where a careless mapping would collide
near_default = st.builds(
    lambda n, tail: "<" * n + tail, st.integers(0, 4), st.sampled_from(["default>", "default", ""])
)
any_name = names | near_default


# --- entity names --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "encoded"),
    [
        ("alice", "alice"),
        ("app-1.v2_x", "app-1.v2_x"),
        ("*", "%2A"),
        ("a b", "a%20b"),
        ("a+b", "a%2Bb"),
        ("100%", "100%25"),
        ("team/app", "team%2Fapp"),
        ("user@example.com", "user%40example.com"),
        ("CN=alice,O=Acme", "CN%3Dalice%2CO%3DAcme"),
        ("jürgen", "j%C3%BCrgen"),
        ("<default>", "%3Cdefault%3E"),  # a literal name, not the default
        ("<<default>", "%3C%3Cdefault%3E"),
    ],
)
def test_entity_names_are_encoded_like_kafkas_sanitizer(name: str, encoded: str) -> None:
    spelled = paths.spell_entity_name(name)
    assert paths.encode_entity_name(spelled) == encoded
    assert paths.decode_entity_name(encoded) == spelled
    assert paths.literal_entity_name(paths.decode_entity_name(encoded)) == name


def test_the_default_is_kafkas_config_entity_name_default() -> None:
    # ZkAdminManager.sanitizeEntityName: a null name is ConfigEntityName.Default, "<default>"
    assert paths.spell_entity_name(None) == paths.DEFAULT_ENTITY
    assert paths.encode_entity_name(paths.spell_entity_name(None)) == "<default>"
    assert paths.decode_entity_name("<default>") == paths.DEFAULT_ENTITY
    assert paths.literal_entity_name(paths.decode_entity_name("<default>")) is None


@pytest.mark.parametrize(
    ("literal", "spelled"),
    [
        ("<default>", "<<default>"),
        ("<<default>", "<<<default>"),
        ("default>", "default>"),
        ("<default", "<default"),
    ],
)
def test_a_name_like_the_default_takes_one_more_angle_bracket(literal: str, spelled: str) -> None:
    assert paths.spell_entity_name(literal) == spelled
    assert paths.literal_entity_name(spelled) == literal


@given(name=any_name)
def test_encoding_matches_kafka_for_any_name(name: str) -> None:
    assert paths.encode_entity_name(paths.spell_entity_name(name)) == kafka_sanitize(name)


@given(name=any_name)
def test_every_name_kafka_writes_reads_back(name: str) -> None:
    spelled = paths.spell_entity_name(name)
    assert paths.literal_entity_name(paths.decode_entity_name(kafka_sanitize(name))) == name
    assert paths.decode_entity_name(paths.encode_entity_name(spelled)) == spelled
    assert paths.literal_entity_name(spelled) == name
    assert "/" not in paths.encode_entity_name(spelled)
    assert paths.encode_entity_name(spelled) != paths.DEFAULT_ENTITY  # a literal name is never the default


@given(name=st.none() | any_name)
def test_spelling_round_trips_and_keeps_the_default_apart(name: str | None) -> None:
    spelled = paths.spell_entity_name(name)
    assert paths.literal_entity_name(spelled) == name
    assert (spelled == paths.DEFAULT_ENTITY) == (name is None)


@given(a=st.none() | any_name, b=st.none() | any_name)
def test_distinct_names_have_distinct_spellings_and_znodes(a: str | None, b: str | None) -> None:
    if a != b:
        assert paths.spell_entity_name(a) != paths.spell_entity_name(b)
        assert paths.encode_entity_name(paths.spell_entity_name(a)) != paths.encode_entity_name(
            paths.spell_entity_name(b)
        )


def test_kafkas_own_sanitizer_test() -> None:
    # org.apache.kafka.common.metrics.SanitizerTest.testSanitize
    principal = "CN=Some characters !@#$%&*()_-+=';:,/~"
    sanitized = paths.encode_entity_name(principal)
    assert sanitized == kafka_sanitize(principal)
    assert all(ch.isascii() and (ch.isalnum() or ch in "._-") for ch in sanitized.replace("%", "_"))
    assert paths.decode_entity_name(sanitized) == principal


def test_a_plus_sign_reads_as_a_space_as_in_kafka() -> None:
    assert paths.decode_entity_name("a+b") == "a b"


# --- config entities -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user", "client_id", "path"),
    [
        ("alice", None, "/config/users/alice"),
        (None, "app-1", "/config/clients/app-1"),
        ("alice", "app-1", "/config/users/alice/clients/app-1"),
        ("<default>", None, "/config/users/<default>"),
        (None, "<default>", "/config/clients/<default>"),
        ("alice", "<default>", "/config/users/alice/clients/<default>"),
        ("<default>", "<default>", "/config/users/<default>/clients/<default>"),
        ("CN=a b,O=*", "my app", "/config/users/CN%3Da%20b%2CO%3D%2A/clients/my%20app"),
    ],
)
def test_config_entity_paths(user: str | None, client_id: str | None, path: str) -> None:
    assert paths.config_entity(user, client_id) == path


def test_a_quota_entity_needs_a_user_or_a_client_id() -> None:
    with pytest.raises(ValueError, match="needs a user, a client-id or both"):
        paths.config_entity(None, None)


@pytest.mark.parametrize(
    ("path", "entity"),
    [
        ("/config/users/alice/clients/app-1", "users/alice/clients/app-1"),
        ("/config/users/alice", "users/alice"),
        ("/config/clients/%2A", "clients/%2A"),
        ("/config/topics/foo", "topics/foo"),
        ("/config/brokers/<default>", "brokers/<default>"),
    ],
)
def test_entity_path_is_the_config_path_without_its_prefix(path: str, entity: str) -> None:
    assert paths.entity_path(path) == entity


@pytest.mark.parametrize("path", ["/config", "/configs/users/a", "/brokers/ids/1", "config/users/a"])
def test_entity_path_refuses_other_paths(path: str) -> None:
    with pytest.raises(ValueError, match="not a config path"):
        paths.entity_path(path)


@given(
    user=st.none() | names.map(paths.spell_entity_name),
    client_id=st.none() | names.map(paths.spell_entity_name),
)
def test_every_entity_path_makes_a_config_change_notification(
    user: str | None, client_id: str | None
) -> None:
    if user is None and client_id is None:
        return
    entity = paths.entity_path(paths.config_entity(user, client_id))
    assert decode_config_change(encode_config_change(entity)) == entity
    parts = entity.split("/")
    names_in_path = [paths.decode_entity_name(part) for part in parts[1::2]]
    assert names_in_path == [name for name in (user, client_id) if name is not None]


def test_config_paths_of_topics_and_brokers() -> None:
    assert paths.config_topic("orders") == "/config/topics/orders"
    assert paths.config_broker(3) == "/config/brokers/3"
    assert paths.config_broker(None) == "/config/brokers/<default>"
    assert paths.config_change("config_change_0000000007") == "/config/changes/config_change_0000000007"
    assert paths.CONFIG_CHANGE_PREFIX == "/config/changes/config_change_"


# --- the rest of Kafka's layout ------------------------------------------------------------------


def test_cluster_and_broker_paths() -> None:
    assert (paths.CONTROLLER, paths.CONTROLLER_EPOCH, paths.CLUSTER_ID) == (
        "/controller",
        "/controller_epoch",
        "/cluster/id",
    )
    assert paths.broker(1) == "/brokers/ids/1"


def test_topic_paths() -> None:
    assert paths.topic("orders") == "/brokers/topics/orders"
    assert paths.topic_partitions("orders") == "/brokers/topics/orders/partitions"
    assert paths.partition("orders", 3) == "/brokers/topics/orders/partitions/3"
    assert paths.partition_state("orders", 3) == "/brokers/topics/orders/partitions/3/state"
    assert paths.delete_topic("orders") == "/admin/delete_topics/orders"


def test_admin_and_notification_paths() -> None:
    assert paths.REASSIGN_PARTITIONS == "/admin/reassign_partitions"
    assert paths.REASSIGN_PARTITIONS_EXTRA == "/admin/reassign_partitions_extra"
    assert paths.REASSIGN_CANCEL == "/admin/reassign_cancel"
    assert paths.PREFERRED_REPLICA_ELECTION == "/admin/preferred_replica_election"
    assert (
        paths.reassignment_request("request_0000000003") == "/admin/reassignment_requests/request_0000000003"
    )
    assert paths.REASSIGNMENT_REQUEST_PREFIX == "/admin/reassignment_requests/request_"
    assert paths.reassignment_status_topic("orders") == "/admin/reassignments/orders"
    assert paths.reassignment_status("orders", 2) == "/admin/reassignments/orders/2"
    assert paths.isr_change("isr_change_0000000001") == "/isr_change_notification/isr_change_0000000001"
    assert paths.ISR_CHANGE_PREFIX == "/isr_change_notification/isr_change_"


def test_persistent_paths_are_distinct_absolute_paths() -> None:
    assert len(set(paths.PERSISTENT_PATHS)) == len(paths.PERSISTENT_PATHS)
    for path in paths.PERSISTENT_PATHS:
        assert path.startswith("/")
        assert not path.endswith("/")
        assert "//" not in path
    assert paths.REASSIGND in paths.PERSISTENT_PATHS


@pytest.mark.parametrize(
    ("path", "parent", "basename"),
    [
        ("/controller", "/", "controller"),
        ("/brokers/ids/1", "/brokers/ids", "1"),
        ("/brokers/topics/t/partitions/0/state", "/brokers/topics/t/partitions/0", "state"),
    ],
)
def test_parent_and_basename(path: str, parent: str, basename: str) -> None:
    assert paths.parent(path) == parent
    assert paths.basename(path) == basename
