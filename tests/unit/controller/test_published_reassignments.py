"""The publisher's reassignment views, kept per dirty topic (only topics with moving partitions,
or with views to drop, are looked at), against views built from scratch over every topic, after
random sequences of the events that change the context (tests/unit/controller/test_partition_index.py's).
A view that did not change stays the same object, and an unchanged set of views is not copied:
the HTTP layer keeps its encoded answers per object."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reassignd.controller.instance.metrics import ControllerMetrics
from reassignd.controller.runtime.publisher import Publisher
from reassignd.controller.state.context import ControllerContext
from tests.examples import examples
from tests.unit.controller.partition_index_helpers import Event, apply, events, registration

# one registry for every publisher here: the views never touch the metrics, and a registry of the
# controller's metrics costs more to build than most examples take
METRICS = ControllerMetrics()


def from_scratch(ctx: ControllerContext) -> Publisher:
    publisher = Publisher(1, METRICS)
    publisher._reassignment_views(ctx, list(ctx.assignments))
    return publisher


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(events, max_size=40), st.lists(st.integers(0, 40), max_size=8))
def test_kept_views_equal_views_built_from_scratch(sequence: list[Event], publishes: list[int]) -> None:
    ctx = ControllerContext(epoch=7, epoch_zk_version=6)
    for b in (1, 2, 3):
        ctx.add_broker(registration(b), 100 + b)
    publisher = Publisher(1, METRICS)
    for i, event in enumerate([*sequence, None]):
        if i in publishes or event is None:  # a publish covers every event since the last one
            before = dict(publisher._reassignments)
            changed = publisher._reassignment_views(ctx, ctx.dirty_topics)
            ctx.dirty_topics.clear()
            kept = publisher._reassignments
            assert kept == from_scratch(ctx)._reassignments
            assert changed == (kept != before)
            assert all(kept[tp] is view for tp, view in before.items() if kept.get(tp) == view)
            assert publisher._shown == {t: {p for (t2, p) in kept if t2 == t} for t in {tp[0] for tp in kept}}
        if event is not None:
            apply(ctx, event)
