"""The pure parts of DescribeTopicPartitions (75: pages, cursors, the limit) and
DescribeUserScramCredentials (50: no credentials kept), encoded and decoded as a client would."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.protocol.admin import (
    DescribeTopicPartitionsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)

from reassignd.controller.model.snapshot import PartitionView, TopicView
from reassignd.kafka_listener import protocol
from reassignd.kafka_listener.scram import describe_user_scram_credentials_refusal, scram_results
from reassignd.kafka_listener.topic_partitions import (
    MAX_RESPONSE_PARTITIONS,
    Page,
    cursor_problem,
    describe_page,
    page_response,
    response_limit,
)

LIVE = frozenset({1, 2, 3})


def view(name: str, count: int, leader: int = 1) -> TopicView:
    return TopicView(
        name, None, tuple(PartitionView(p, (leader, 2), leader, 0, (leader, 2), (), ()) for p in range(count))
    )


TOPICS = {v.name: v for v in (view("a", 3), view("b", 5), view("c", 1), view("d", 0))}
NAMES = sorted(TOPICS)


def described(page: Page) -> list[tuple[str, int]]:
    return [(t.name, p.partition_index) for t in page.topics for p in t.partitions]


def walk(named: list[str] | None, limit: int) -> tuple[list[tuple[str, int]], list[Page]]:
    """Every page until no cursor comes back; what they described together."""
    cursor = None
    pages = []
    seen: list[tuple[str, int]] = []
    for _ in range(100):
        page = describe_page(TOPICS, NAMES, named, cursor, limit, LIVE)
        pages.append(page)
        seen += described(page)
        if page.next_cursor is None:
            return seen, pages
        cursor = page.next_cursor
    raise AssertionError("the cursor never ended")


EVERY = [(n, p.partition) for n in NAMES for p in TOPICS[n].partitions]


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 8, 9, 10, 2000])
def test_pages_cover_every_partition_once_each_within_the_limit(limit: int) -> None:
    seen, pages = walk(None, limit)
    assert seen == EVERY
    assert all(len(described(p)) <= limit for p in pages)
    assert all(len(described(p)) == limit for p in pages[:-1] if p.next_cursor and p.next_cursor[1] > 0)


def test_the_cursor_points_inside_a_topic_or_at_the_next_one() -> None:
    first = describe_page(TOPICS, NAMES, None, None, 4, LIVE)
    assert described(first) == [("a", 0), ("a", 1), ("a", 2), ("b", 0)]
    assert first.next_cursor == ("b", 1)
    second = describe_page(TOPICS, NAMES, None, first.next_cursor, 4, LIVE)
    assert described(second) == [("b", 1), ("b", 2), ("b", 3), ("b", 4)]
    assert second.next_cursor == ("c", 0)  # full: the next page starts at the next topic
    last = describe_page(TOPICS, NAMES, None, second.next_cursor, 4, LIVE)
    assert [t.name for t in last.topics] == ["c", "d"] and last.next_cursor is None


def test_named_topics_in_name_order_unknown_ones_answered() -> None:
    page = describe_page(TOPICS, NAMES, ["c", "no-such", "a", "c", "bad/name"], None, 2000, LIVE)
    assert [(t.name, t.error_code) for t in page.topics] == [
        ("a", 0),
        ("bad/name", 17),
        ("c", 0),
        ("no-such", 3),
    ]
    # every topic: no error entries; a standby (no topics) answers named ones retriably
    assert all(t.error_code == 0 for t in describe_page(TOPICS, NAMES, None, None, 2000, LIVE).topics)
    standby = describe_page({}, [], ["a"], None, 2000, LIVE, active=False)
    assert [(t.name, t.error_code) for t in standby.topics] == [("a", 5)]
    named, _ = walk(["b", "a"], 3)
    assert named == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1), ("b", 2), ("b", 3), ("b", 4)]


def test_a_partition_whose_leader_is_gone() -> None:
    topics = {"t": view("t", 1, leader=7)}
    [topic] = describe_page(topics, ["t"], None, None, 10, LIVE).topics
    [p] = topic.partitions
    assert (p.error_code, p.leader_id, p.offline_replicas, p.replica_nodes) == (5, -1, [7], [7, 2])


def test_the_limit_and_the_cursor_checks() -> None:
    assert [response_limit(n) for n in (-5, 0, 1, 2000, 2001, 2**31 - 1)] == [1, 1, 1, 2000, 2000, 2000]
    assert MAX_RESPONSE_PARTITIONS == 2000
    assert cursor_problem(None, None) is None
    assert cursor_problem(None, ("a", 0)) is None
    assert cursor_problem(None, ("a", -1)) is not None
    assert cursor_problem(["b"], ("a", 0)) is not None
    assert cursor_problem(["a"], ("a", 2)) is None


def roundtrip(response: Any, cls: Any) -> Any:
    frame = protocol.encode_response(response, 0, 5)
    return cls.decode(frame[4:], version=0, header=True)


def test_a_page_encodes_as_kafka_clients_read_it() -> None:
    page = describe_page(TOPICS, NAMES, None, None, 2, LIVE)
    decoded = roundtrip(page_response(page), DescribeTopicPartitionsResponse)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in decoded.topics] == [("a", [0, 1])]
    assert (decoded.next_cursor.topic_name, decoded.next_cursor.partition_index) == ("a", 2)
    done = roundtrip(
        page_response(describe_page(TOPICS, NAMES, ["c"], None, 2, LIVE)), DescribeTopicPartitionsResponse
    )
    assert done.next_cursor is None


def test_no_scram_credentials_are_kept() -> None:
    assert scram_results(None) == []
    assert scram_results([]) == []
    results = scram_results(["bob", "alice", "bob", "carol"])
    assert [(u, code) for u, code, _ in results] == [("alice", 91), ("carol", 91), ("bob", 92)]
    assert "does not exist: alice" in results[0][2]
    Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
    response = DescribeUserScramCredentialsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        results=[Result(user=u, error_code=c, error_message=m, credential_infos=[]) for u, c, m in results],
    )
    decoded = roundtrip(response, DescribeUserScramCredentialsResponse)
    assert [(r.user, r.error_code) for r in decoded.results] == [("alice", 91), ("carol", 91), ("bob", 92)]


def test_a_scram_refusal_names_each_user_once() -> None:
    """Never reached through the controller (nothing of it is asked), but an answer all the same."""
    Named = DescribeUserScramCredentialsRequest.UserName
    request = DescribeUserScramCredentialsRequest(users=[Named(name=n) for n in ("a", "b", "a")])
    refused = roundtrip(
        describe_user_scram_credentials_refusal(request, 0, -1, "boom"), DescribeUserScramCredentialsResponse
    )
    assert (refused.error_code, refused.error_message) == (-1, "boom")
    assert [(r.user, r.error_code) for r in refused.results] == [("a", -1), ("b", -1)]
    everyone = describe_user_scram_credentials_refusal(
        DescribeUserScramCredentialsRequest(users=None), 0, -1, "x"
    )
    assert roundtrip(everyone, DescribeUserScramCredentialsResponse).results == []
