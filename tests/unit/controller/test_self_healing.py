"""Self-healing's pure parts: the decisions (controller/healing/decisions.py) and the placement the
controller is handed (feeder/evacuation.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec

from reassignd.controller.healing import decisions
from reassignd.controller.healing.decisions import Decision, decide
from reassignd.controller.model.snapshot import ClusterSnapshot, HealingOutcome, LostBroker, SelfHealingView
from reassignd.executor.model import (
    Adaptive,
    Batch,
    BatchMoveEnd,
    BatchSpec,
    BatchState,
    Limits,
    PartitionSpec,
)
from reassignd.executor.submit import submit
from reassignd.feeder.evacuation import evacuate
from reassignd.http.shapes import status_json
from reassignd.topic_partition import Replicas, TopicPartition

GRACE = 5_000
LIMITS = Limits(5, 100, 100)


def healing_batch(broker: int, lost_at: int, round_: int, moves: dict[TopicPartition, Replicas]) -> Batch:
    spec = BatchSpec(
        batch_id=decisions.batch_id(broker, lost_at, round_),
        partitions=tuple(PartitionSpec(t, p, r) for (t, p), r in moves.items()),
        limits=LIMITS,
        owner=decisions.OWNER,
    )
    return submit(spec, {}, lambda tp: (9, 9, 9), lambda p: None, 0).batch


def ended(batch: Batch, end: BatchMoveEnd) -> Batch:
    moves = {tp: dataclasses.replace(m, ended=end) for tp, m in batch.moves.items()}
    state = BatchState.COMPLETED if end is BatchMoveEnd.COMPLETED else BatchState.STOPPED
    return dataclasses.replace(batch, state=state, moves=moves)


def test_batch_ids_name_the_broker_its_loss_and_the_round() -> None:
    first = healing_batch(4, 1000, 1, {("t", 0): (1, 2)})
    third = healing_batch(4, 1000, 3, {("t", 0): (1, 2)})
    assert first.batch_id == "self-healing-broker-4-1000"
    assert third.batch_id == "self-healing-broker-4-1000-r3"
    assert decisions.batch_round(first, 4, 1000) == 1
    assert decisions.batch_round(third, 4, 1000) == 3
    assert decisions.batch_round(first, 4, 999) is None  # another loss of the same broker
    assert decisions.batch_round(first, 5, 1000) is None
    client = dataclasses.replace(first, spec=dataclasses.replace(first.spec, owner=None))
    assert decisions.batch_round(client, 4, 1000) is None  # a client's batch under that name


def test_a_broker_hosting_replicas_is_recorded_once_gone() -> None:
    hosted = decisions.hosted_by_offline([(("t", 0), (1, 4)), (("t", 1), (1, 2))], live={1, 2})
    assert hosted == {4: [("t", 0)]}
    assert decide({}, hosted, {1, 2}, [], GRACE, 0) == Decision(record=(4,))
    assert decide({4: 0}, hosted, {1, 2}, [], GRACE, 0) == Decision()  # recorded already


def test_the_grace_runs_from_the_recorded_loss() -> None:
    hosted = {4: [("t", 0)]}
    assert decide({4: 1000}, hosted, {1, 2}, [], GRACE, 1000 + GRACE - 1) == Decision()
    assert decide({4: 1000}, hosted, {1, 2}, [], GRACE, 1000 + GRACE) == Decision(heal=(4,))


def test_no_second_round_while_one_is_unfinished_or_when_the_last_moved_nothing() -> None:
    hosted = {4: [("t", 0)]}
    now = 1000 + GRACE
    running = healing_batch(4, 1000, 1, {("t", 0): (1, 2)})
    assert decide({4: 1000}, hosted, {1, 2}, [running], GRACE, now) == Decision()
    done = ended(running, BatchMoveEnd.COMPLETED)
    assert decide({4: 1000}, hosted, {1, 2}, [done], GRACE, now) == Decision(heal=(4,))
    assert decisions.rounds_of([done], 4, 1000).next_round == 2
    nothing = ended(running, BatchMoveEnd.CANCELLED)
    assert decide({4: 1000}, hosted, {1, 2}, [nothing], GRACE, now) == Decision()
    assert decide({4: 1000}, hosted, {1, 2}, [done], GRACE, now, stalled={4}) == Decision()


def test_a_returning_broker_and_an_emptied_one_end_their_healing() -> None:
    running = healing_batch(4, 1000, 1, {("t", 0): (1, 2)})
    assert decide({4: 1000}, {}, {1, 2, 4}, [running], GRACE, 9999) == Decision(returned=(4,))
    assert decide({4: 1000}, {}, {1, 2}, [], GRACE, 9999) == Decision(emptied=(4,))
    # hosts nothing but its batch is still finishing: wait for it
    assert decide({4: 1000}, {}, {1, 2}, [running], GRACE, 9999) == Decision()


def test_busy_partitions_are_those_moving_or_waiting_in_a_batch() -> None:
    running = healing_batch(4, 1000, 1, {("t", 0): (1, 2), ("t", 1): (2, 3)})
    finished = ended(healing_batch(5, 1000, 1, {("t", 2): (1, 2)}), BatchMoveEnd.COMPLETED)
    assert decisions.busy_partitions([running, finished], {("u", 0)}) == {("t", 0), ("t", 1), ("u", 0)}


def test_a_partition_on_two_lost_brokers_moves_both_replicas_once_both_graces_are_over() -> None:
    replicas = {("t", 0): (1, 2, 3), ("t", 1): (1, 3, 4), ("t", 2): (1, 5, 6)}
    live = {3, 4, 5, 6}
    hosted = sorted(replicas)
    heal = decisions.healable(1, hosted, replicas.get, live, due={1}, busy=())
    assert heal.partitions == {("t", 1), ("t", 2)} and heal.leaving == {1} and heal.waiting == 1
    heal = decisions.healable(1, hosted, replicas.get, live, due={1, 2}, busy={("t", 2)})
    assert heal.partitions == {("t", 0), ("t", 1)} and heal.leaving == {1, 2} and heal.waiting == 1


# --- the placement -------------------------------------------------------------------------------

RACKS = {1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c"}


def test_evacuation_moves_only_the_lost_replicas_to_distinct_racks() -> None:
    partitions = [("t", p, (p + 1) * 1000, (7, 1 + p % 6, 1 + (p + 1) % 6)) for p in range(12)]
    partitions.append(("u", 0, 5, (1, 2, 3)))  # nothing on broker 7: never moves
    targets = evacuate(RACKS, partitions, frozenset({7}))
    assert set(targets) == {("t", p) for p in range(12)}
    for (_t, p), replicas in targets.items():
        before = partitions[p][3]
        assert replicas[1:] == before[1:], "only the lost replica changes, in its position"
        assert 7 not in replicas and len({RACKS[b] for b in replicas}) == 3


def test_evacuation_spreads_the_bytes_over_the_receivers() -> None:
    partitions = [("t", p, 1000, (7, 1 + p % 6)) for p in range(60)]
    targets = evacuate(RACKS, partitions, frozenset({7}))
    received: dict[int, int] = {}
    for replicas in targets.values():
        received[replicas[0]] = received.get(replicas[0], 0) + 1
    assert len(targets) == 60 and max(received.values()) - min(received.values()) <= 2, received


def test_evacuation_never_places_on_another_lost_broker() -> None:
    partitions = [("t", p, 10, (7, 8, 1 + p % 6)) for p in range(6)]
    targets = evacuate(RACKS, partitions, frozenset({7}))
    assert all(8 in r and 7 not in r and set(r) - {8} <= set(RACKS) for r in targets.values())


def test_evacuation_of_a_broker_hosting_nothing_plans_nothing() -> None:
    assert evacuate(RACKS, [("t", 0, 0, (1, 2))], frozenset({7})) == {}
    assert evacuate({}, [("t", 0, 0, (7,))], frozenset({7})) == {}


# --- what GET /v1/status shows -------------------------------------------------------------------


def test_the_status_shows_self_healing_on_the_active_controller_only() -> None:
    view = SelfHealingView(
        enabled=True,
        broker_grace_s=5.0,
        brokers=(LostBroker(4, 1000, 6000, "healing", ("self-healing-broker-4-1000",), 2, (("t", 0),)),),
        recent=(HealingOutcome(5, None, "returned", "it returned before its replicas moved", 900),),
    )
    args: dict[str, Any] = {
        "zk_connected": True,
        "zk_session_id": 1,
        "queue_size": 0,
        "queue_time_ms": {},
        "uptime_s": 1.0,
    }
    active = msgspec.json.decode(
        msgspec.json.encode(status_json(ClusterSnapshot(9000, True, 3, None, self_healing=view), **args))
    )
    assert active["self_healing"] == {
        "enabled": True,
        "broker_grace_s": 5.0,
        "brokers": [
            {
                "broker_id": 4,
                "lost_at_ms": 1000,
                "heal_at_ms": 6000,
                "state": "healing",
                "batch_ids": ["self-healing-broker-4-1000"],
                "replicas": 2,
            }
        ],
        "recent": [
            {
                "broker_id": 5,
                "batch_id": None,
                "outcome": "returned",
                "reason": "it returned before its replicas moved",
                "at_ms": 900,
            }
        ],
    }
    assert "self_healing" not in msgspec.json.decode(
        msgspec.json.encode(status_json(ClusterSnapshot(9001, False, 3, None), **args))
    )


def test_a_heal_runs_with_adaptive_concurrency_from_the_default_cap_or_the_controllers_bounds() -> None:
    mine = decisions.heal_limits(5, 1000, 2, None)
    assert (mine.moves_per_broker, mine.moves_in_cluster, mine.leader_moves_per_broker) == (5, 1000, 2)
    assert mine.adaptive == Adaptive(5, 40)
    assert decisions.heal_limits(5, 1000, 2, (1, 12)).adaptive == Adaptive(1, 12)
