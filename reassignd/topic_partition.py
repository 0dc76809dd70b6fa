"""``TopicPartition``: a partition named by its topic and number, Kafka's TopicPartition;
``Replicas``: a partition's replicas, broker ids in their order (the first is the preferred
leader); and Kafka's rules for a topic's name. Every package takes them from here."""

from __future__ import annotations

TopicPartition = tuple[str, int]
Replicas = tuple[int, ...]

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def topic_name_problem(name: str) -> str | None:
    """Why ``name`` is not a legal topic name (Kafka's messages), or None: 1–249 characters of
    [a-zA-Z0-9._-], neither "." nor ".."."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return (
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters, "
            f"topic name: {name}"
        )
    if not set(name) <= _LEGAL_CHARS:
        return (
            f'Topic name "{name}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'"
        )
    return None
