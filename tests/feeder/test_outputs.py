"""The plan's files: accepted by our own kafka-reassign-partitions parser and batch-file reader
(what ``admin reassign --execute`` and ``admin batch submit`` read), rollback = the originals,
batch ids derived from the plan id, predictions per broker."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from reassignd.admin.batch_file import parse_batch_file
from reassignd.feeder.goals import Decommission, PlanOptions, Rebalance
from reassignd.feeder.model import CURRENT, ORIGINAL, PARTITION, SIZE, TOPIC
from reassignd.feeder.outputs import (
    batches_document,
    picture_file,
    plan_file,
    plan_id,
    rollback_file,
    summary_text,
)
from reassignd.feeder.planner import plan_locally
from reassignd.feeder.predict import predict_batch
from reassignd.plan_format import parse_plan
from reassignd.plan_picture import SVG_NS, loads_of
from tests.feeder.conftest import kafka_cluster


def test_plan_and_rollback_are_reassign_plans() -> None:
    cluster = kafka_cluster(brokers=9, racks=3, topics=5, partitions=20)
    result = plan_locally(cluster, [Decommission(frozenset({4}))], PlanOptions())
    plan = parse_plan(plan_file(result))
    rollback = parse_plan(rollback_file(result))
    assert plan.targets == {(r[0], r[1]): r[CURRENT] for r in result.moves}
    assert rollback.targets == {(r[0], r[1]): r[ORIGINAL] for r in result.moves}
    assert all(e.log_dirs == ("any",) * len(e.replicas) for e in plan.entries)


def test_batches_are_post_bodies_with_expected_replicas() -> None:
    cluster = kafka_cluster(brokers=9, racks=3, topics=5, partitions=20)
    result = plan_locally(cluster, [Decommission(frozenset({4})), Rebalance("leaders")], PlanOptions())
    doc = batches_document(result, "2026-11-24T00:00:00Z", batch_size=7)
    bodies = parse_batch_file(json.dumps(doc).encode())
    pid = plan_id(result)
    assert doc["plan_id"] == pid and doc["goals"] == ["decommission:4", "rebalance:leaders"]
    assert [b.batch_id for b in bodies] == [f"{pid}-{i:04d}" for i in range(1, len(bodies) + 1)]
    assert all(b.partitions <= 7 for b in bodies)
    sent = {(p["topic"], p["partition"]): p for b in doc["batches"] for p in b["partitions"]}
    assert len(sent) == len(result.moves)
    for row in result.moves:
        p = sent[(row[0], row[1])]
        assert (tuple(p["replicas"]), tuple(p["expected_replicas"])) == (row[CURRENT], row[ORIGINAL])
    predicted = doc["predicted"]
    assert predicted["bytes"] == result.copied_bytes == sum(b["bytes"] for b in predicted["batches"])
    assert predicted["bytes_per_broker_after"]["4"] == 0
    first_data_batch = next(b for b in predicted["batches"] if b["bytes"])
    assert first_data_batch["makespan_s"] > 0
    # leadership-only reorders come first: they copy nothing
    first = doc["batches"][0]["partitions"][0]
    assert set(first["replicas"]) == set(first["expected_replicas"])


def test_plan_id_depends_on_the_moves_only() -> None:
    cluster = kafka_cluster(brokers=9, racks=3, topics=5, partitions=20)
    a = plan_locally(cluster, [Decommission(frozenset({4}))], PlanOptions())
    b = plan_locally(cluster, [Decommission(frozenset({4}))], PlanOptions())
    c = plan_locally(cluster, [Decommission(frozenset({5}))], PlanOptions())
    assert plan_id(a) == plan_id(b) != plan_id(c)
    assert batches_document(a, "x")["batches"] == batches_document(b, "y")["batches"]


def test_summary_names_moves_bytes_and_balance() -> None:
    cluster = kafka_cluster(brokers=9, racks=3, topics=5, partitions=20)
    result = plan_locally(cluster, [Decommission(frozenset({4}))], PlanOptions())
    text = summary_text(result, batches_document(result, "now"))
    assert f"partitions moved: {len(result.moves)}" in text
    assert f"({sum(r[SIZE] for r in result.moves)} bytes)" in text
    assert "balance over 8 brokers" in text and "bytes     max/mean" in text


def test_picture_draws_each_brokers_load_before_and_after() -> None:
    cluster = kafka_cluster(brokers=9, racks=3, topics=5, partitions=20)
    result = plan_locally(cluster, [Decommission(frozenset({4}))], PlanOptions())
    document = batches_document(result, "now")
    root = ET.fromstring(picture_file(result, document))
    # the figures counted again from the cluster's rows, the plan's moves applied for "after"
    moved = {(r[TOPIC], r[PARTITION]): r[CURRENT] for r in result.moves}
    expected = {
        "before": loads_of((r[ORIGINAL], r[SIZE]) for r in cluster.rows),
        "after": loads_of((moved.get((r[TOPIC], r[PARTITION]), r[ORIGINAL]), r[SIZE]) for r in cluster.rows),
    }
    drawn = {
        (int(b.get("data-broker", "")), b.get("data-metric"), b.get("data-phase")): int(
            b.get("data-value", "")
        )
        for b in root.iter(f"{{{SVG_NS}}}rect")
        if "data-metric" in b.attrib
    }
    assert len(drawn) == 9 * 3 * 2
    for (broker, metric, phase), value in drawn.items():
        load = next((v for h, v in expected[str(phase)].items() if h.broker == broker), None)
        assert value == (0 if load is None else load.value(str(metric))), (broker, metric, phase)
    assert drawn[(4, "replicas", "after")] == 0 < drawn[(4, "replicas", "before")]
    assert f"plan {document['plan_id']}" in [t.text for t in root.iter(f"{{{SVG_NS}}}text")]


def test_predicted_makespan_under_the_caps() -> None:
    # six 1 GiB moves into broker 9, from three leaders: broker 9 takes in 6 GiB at 100 MiB/s
    gib = 2**30
    rows = [(f"t{i}", 0, gib, (1 + i % 3, 4), (9, 4)) for i in range(6)]
    p = predict_batch(rows)
    assert p.bytes == 6 * gib and p.bytes_in == {9: 6 * gib}
    assert p.bytes_out == {1: 2 * gib, 2: 2 * gib, 3: 2 * gib}
    assert p.lower_bound_s == pytest.approx(6 * gib / (100 * 2**20))
    assert p.makespan_s == pytest.approx(p.lower_bound_s)  # broker 9 is never idle
    # one move per broker at a time, and a leader-bound move: 2 GiB out of broker 1 alone
    slow = predict_batch([("a", 0, gib, (1, 2), (3, 2)), ("b", 0, gib, (1, 2), (4, 2))], moves_per_broker=1)
    assert slow.makespan_s == pytest.approx(2 * gib / (100 * 2**20))
    serial = predict_batch([("a", 0, gib, (1, 2), (3, 2)), ("b", 0, gib, (5, 2), (3, 2))], moves_per_broker=1)
    assert serial.makespan_s == pytest.approx(2 * gib / (100 * 2**20))  # both add to broker 3
    assert predict_batch([("a", 0, gib, (1, 2), (2, 1))]).makespan_s == 0  # a reorder copies nothing


def test_nothing_to_move() -> None:
    cluster = kafka_cluster(brokers=6, racks=3, topics=1, partitions=6, sigma=0.0)
    result = plan_locally(cluster, [Rebalance("replicas")], PlanOptions())
    assert result.moves == ()
    document = batches_document(result, "now")
    assert document["batches"] == [] and document["predicted"]["moves"] == 0
    assert "nothing to move" in summary_text(result, document)
    assert json.loads(plan_file(result)) == {"version": 1, "partitions": []}
