"""The topic configs the controller acts on, resolved as Kafka resolves a topic's LogConfig.

A key set in ``/config/topics/<t>`` wins; otherwise the dynamic cluster-wide broker default in
``/config/brokers/<default>`` (the same key: Kafka's ``unclean.leader.election.enable`` and
``min.insync.replicas`` are both topic and broker configs); otherwise Kafka's static default.

:class:`TopicConfigs` is the pure part; :func:`read_topic_configs` the one read (multiRead of the
default and every topic's znode). Used by every leader election (unclean or not) and by every
cancel path (the unclean-election safety rule), and by KIP-236's ``min.insync.replicas`` check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from reassignd.controller.model.config_rules import parse_bool, parse_positive_int
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.reads import ZkReads

Report = Callable[[str, str, str], None]  # (path, reason, kind)

UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"
MIN_INSYNC_REPLICAS = "min.insync.replicas"
KIND = "topic_config"  # the ``kind`` of reports about config znodes

# "brokers/<default>": the entity path config change notifications carry for the default
DEFAULT_BROKER_ENTITY = paths.config_broker(None).removeprefix(paths.CONFIG + "/")
TOPIC_ENTITY_PREFIX = paths.CONFIG_TOPICS.removeprefix(paths.CONFIG + "/") + "/"


@dataclass(frozen=True, slots=True)
class TopicConfigs:
    """Config values as read: ``default`` is ``/config/brokers/<default>``, ``topics`` each read
    topic's own config (absent znode: empty). A value that does not parse is unusable (as a
    LogConfig that fails validation in Kafka) and counts as Kafka's static default."""

    default: Mapping[str, str] = field(default_factory=dict)
    topics: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def value(self, topic: str, key: str) -> str | None:
        own = self.topics.get(topic, {})
        if key in own:
            return own[key]
        return self.default.get(key)

    def unclean_leader_election(self, topic: str) -> bool:
        """``unclean.leader.election.enable`` of ``topic`` (Kafka's default: false)."""
        value = self.value(topic, UNCLEAN_LEADER_ELECTION_ENABLE)
        return value is not None and parse_bool(value) is True

    def min_insync_replicas(self, topic: str) -> int:
        """``min.insync.replicas`` of ``topic`` (Kafka's default: 1)."""
        value = self.value(topic, MIN_INSYNC_REPLICAS)
        parsed = None if value is None else parse_positive_int(value)
        return 1 if parsed is None else parsed


def config_problems(config: Mapping[str, str]) -> list[str]:
    """Why the keys the controller reads from ``config`` are unusable (empty: all fine)."""
    problems = []
    unclean = config.get(UNCLEAN_LEADER_ELECTION_ENABLE)
    if unclean is not None and parse_bool(unclean) is None:
        problems.append(f"{UNCLEAN_LEADER_ELECTION_ENABLE}: not a boolean: {unclean!r}")
    min_isr = config.get(MIN_INSYNC_REPLICAS)
    if min_isr is not None and parse_positive_int(min_isr) is None:
        problems.append(f"{MIN_INSYNC_REPLICAS}: not a positive integer: {min_isr!r}")
    return problems


def topics_of_entities(entity_paths: Iterable[str]) -> tuple[set[str], bool]:
    """From config change notifications' entity paths: (the topics named, whether the broker
    default changed)."""
    topics = {p.removeprefix(TOPIC_ENTITY_PREFIX) for p in entity_paths if p.startswith(TOPIC_ENTITY_PREFIX)}
    return topics, DEFAULT_BROKER_ENTITY in entity_paths


async def read_topic_configs(reads: ZkReads, topics: Iterable[str], report: Report) -> TopicConfigs:
    """The broker default and the configs of ``topics``, in one multiRead. A znode that cannot be
    decoded counts as empty and is reported (it is left for its owner to fix); raises ZkError."""
    names = sorted(set(topics))
    config_paths = [paths.config_broker(None), *(paths.config_topic(t) for t in names)]
    znodes = await reads.get_many(config_paths)
    decoded: list[dict[str, str]] = []
    for path, znode in zip(config_paths, znodes, strict=True):
        config: dict[str, str] = {}
        if znode is not None:
            try:
                config = admin_codec.decode_entity_config(znode.data)
            except codec.CodecError as e:
                report(path, e.reason, KIND)
        for problem in config_problems(config):
            report(path, problem, KIND)
        decoded.append(config)
    return TopicConfigs(decoded[0], dict(zip(names, decoded[1:], strict=True)))
