"""Hypothesis strategies for the batch journal's tests: batches whatever became of them, and
journal entries valid or broken."""

from __future__ import annotations

from hypothesis import strategies as st

from reassignd.executor.model import (
    Adaptive,
    Batch,
    BatchMove,
    BatchMoveEnd,
    BatchSpec,
    BatchState,
    Limits,
    PartitionSpec,
    Strategy,
    SubmitRefusal,
)

texts = st.text(st.characters(codec="utf-8"), max_size=12)
replica_lists = st.lists(st.integers(-(2**31), 2**31 - 1), max_size=4).map(tuple)
recorded = st.lists(st.integers(0, 2**31 - 1), max_size=4, unique=True).map(tuple)
ms = st.integers(0, 2**63 - 1)
throttles = st.dictionaries(texts, st.none() | texts, max_size=2)


@st.composite
def batches(draw: st.DrawFn) -> Batch:
    tps = draw(st.lists(st.tuples(texts, st.integers(0, 2**31 - 1)), unique=True, max_size=12))
    partitions = tuple(
        PartitionSpec(t, p, draw(replica_lists), draw(st.none() | replica_lists)) for t, p in tps
    )
    spec = BatchSpec(
        batch_id=draw(st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,20}", fullmatch=True)),
        partitions=partitions,
        limits=draw(
            st.builds(
                Limits,
                st.integers(1, 2**31 - 1),
                st.integers(1, 9),
                st.integers(1, 9),
                st.none()
                | st.integers(1, 50).flatmap(
                    lambda low: st.builds(Adaptive, st.just(low), st.integers(low, 99))
                ),
            )
        ),
        owner=draw(st.none() | st.just("self-healing")),
        plan_id=draw(st.none() | texts),
        priority=draw(st.integers(-(2**31), 2**31 - 1)),
        throttle_bytes_per_s=draw(st.none() | st.integers(1, 2**63 - 1)),
        strategy=tuple(
            draw(
                st.lists(
                    st.sampled_from(
                        [Strategy.SMALL_FIRST, Strategy.POSTPONE_UNDER_REPLICATED, Strategy.SPREAD_BROKERS]
                    ),
                    unique=True,
                )
            )
        ),
    )
    moves: dict[tuple[str, int], BatchMove] = {}
    refusals: dict[tuple[str, int], SubmitRefusal] = {}
    for p in partitions:
        if draw(st.booleans()):
            moves[p.tp] = BatchMove(
                p,
                draw(recorded),
                draw(st.none() | st.sampled_from(list(BatchMoveEnd))),
                draw(st.none() | ms),
                draw(st.none() | ms),
                draw(st.none() | texts),
                draw(st.none() | ms),
            )
        else:
            refusals[p.tp] = SubmitRefusal(draw(st.integers(-(2**31), 2**31 - 1)), draw(st.none() | texts))
    return Batch(
        spec=spec,
        state=draw(st.sampled_from(list(BatchState))),
        created_ms=draw(ms),
        updated_ms=draw(ms),
        moves=moves,
        refusals=refusals,
        chunk_size=draw(st.integers(1, 5)),
        broker_throttles=draw(st.dictionaries(st.integers(0, 2**31 - 1), throttles, max_size=3)),
        topic_throttles=draw(st.dictionaries(texts, throttles, max_size=3)),
        rollback_of=draw(st.none() | texts),
        rollback_batch_id=draw(st.none() | texts),
        broker_caps=draw(st.dictionaries(st.integers(0, 2**31 - 1), st.integers(1, 2**31 - 1), max_size=3)),
    )


values = (
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | texts
    | st.lists(st.integers(-(2**32), 2**32), max_size=3)
)
KEYS = [
    "topic",
    "partition",
    "replicas",
    "expected_replicas",
    "state",
    "previous",
    "started_ms",
    "finished_ms",
    "size_bytes",
]


@st.composite
def entries(draw: st.DrawFn) -> dict[str, object]:
    """A valid journal entry (a move's or a refusal's) with up to two fields broken or gone."""
    entry: dict[str, object] = {"topic": draw(texts), "partition": draw(st.integers(0, 2**31 - 1))}
    entry["replicas"] = list(draw(replica_lists))
    if draw(st.booleans()):
        entry["state"], entry["previous"] = (
            draw(st.sampled_from(["running", "completed"])),
            list(draw(recorded)),
        )
        entry.update(
            draw(st.fixed_dictionaries({}, optional={"started_ms": ms, "finished_ms": ms, "size_bytes": ms}))
        )
    else:
        entry["error_code"] = draw(st.integers(-(2**31), 2**31 - 1))
    entry.update(draw(st.fixed_dictionaries({}, optional={"expected_replicas": replica_lists.map(list)})))
    entry.update(draw(st.fixed_dictionaries({}, optional={"error_message": texts})))
    for key in draw(st.lists(st.sampled_from([*KEYS, "error_code", "error_message"]), max_size=2)):
        if draw(st.booleans()):
            entry[key] = draw(values)
        else:
            entry.pop(key, None)
    return entry
