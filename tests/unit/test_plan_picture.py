"""The plan's picture: each bar is one of the figures given, its height proportional to it within
its chart, on an axis that reaches the largest; text escaped; the same figures, the same bytes."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from collections.abc import Mapping

import pytest

from reassignd.plan_picture import (
    METRICS,
    PHASES,
    SVG_NS,
    Holder,
    HolderLoad,
    axis,
    human_bytes,
    loads_of,
    plan_svg,
)

NS = {"svg": SVG_NS}
GIB = 2**30

BEFORE = {
    Holder(1): HolderLoad(3 * GIB, 12, 6),
    Holder(2): HolderLoad(GIB // 2, 4, 1),
    Holder(4): HolderLoad(2 * GIB, 8, 5),
}
AFTER = {
    Holder(1): HolderLoad(2 * GIB, 8, 4),
    Holder(2): HolderLoad(2 * GIB, 8, 4),
    Holder(3): HolderLoad(GIB + 7, 8, 4),  # a broker the plan adds
}  # broker 4 leaves: zero after


def bars(svg: str) -> dict[tuple[str, str, str], ET.Element]:
    """(broker[ log dir], metric, phase) → the bar's element."""
    root = ET.fromstring(svg)
    out = {}
    for rect in root.iterfind(".//svg:rect[@data-metric]", NS):
        key = rect.get("data-broker", "") + (
            " " + rect.get("data-log-dir", "") if "data-log-dir" in rect.attrib else ""
        )
        out[(key, rect.get("data-metric", ""), rect.get("data-phase", ""))] = rect
    return out


def figure(loads: Mapping[Holder, HolderLoad], holder: Holder, metric: str) -> int:
    return loads.get(holder, HolderLoad()).value(metric)


def test_each_bar_is_a_figure_of_the_plan_and_heights_are_proportional() -> None:
    svg = plan_svg("plan-0123456789ab", BEFORE, AFTER, "decommission:4")
    found = bars(svg)
    holders = sorted(set(BEFORE) | set(AFTER))
    assert len(found) == len(holders) * len(METRICS) * len(PHASES)
    for metric in METRICS:
        largest = max(figure(f, h, metric) for h in holders for f in (BEFORE, AFTER))
        per_unit = set()
        for h in holders:
            for phase, loads in zip(PHASES, (BEFORE, AFTER), strict=True):
                rect = found[(str(h.broker), metric, phase)]
                value = figure(loads, h, metric)
                assert rect.get("data-value") == str(value), (h, metric, phase)
                height = float(rect.get("height", "nan"))
                if value == 0:
                    assert height == 0
                else:
                    per_unit.add(round(height / value * largest, 0))
                assert rect.get("class") == f"plan-bar {phase}"
        assert len(per_unit) == 1, (metric, per_unit)  # one scale per chart
        # the largest bar reaches at most the axis' top, and at least half of it
        top_height = per_unit.pop()
        assert 80 <= top_height <= 160, (metric, top_height)


def test_bars_of_a_chart_share_one_base_line() -> None:
    found = bars(plan_svg("p", BEFORE, AFTER))
    for metric in METRICS:
        bases = {
            round(float(r.get("y", "0")) + float(r.get("height", "0")), 1)
            for (_, m, _), r in found.items()
            if m == metric
        }
        assert len(bases) == 1, (metric, bases)


def test_title_legend_and_axis_labels_in_human_units() -> None:
    root = ET.fromstring(plan_svg("plan-0123456789ab", BEFORE, AFTER, "decommission:4"))
    texts = [t.text for t in root.iter(f"{{{SVG_NS}}}text")]
    assert "plan-0123456789ab" in texts and "decommission:4" in texts
    assert "before" in texts and "after" in texts
    assert {"0 B", "1 GiB", "2 GiB", "3 GiB"} <= set(texts)
    title = root.find("svg:title", NS)
    assert title is not None and title.text == "plan-0123456789ab: per-broker load before and after"


def test_text_is_escaped_and_output_deterministic() -> None:
    name = 'plan <script>alert("x")</script> & co'
    holders = {Holder(1, "/data/<a>&b"): HolderLoad(10, 1, 1)}
    svg = plan_svg(name, holders, {})
    assert "<script>" not in svg
    root = ET.fromstring(svg)  # well-formed
    assert root.find("svg:script", NS) is None
    assert name in [t.text for t in root.iter(f"{{{SVG_NS}}}text")]
    found = bars(svg)
    assert found[("1 /data/<a>&b", "bytes", "before")].get("data-value") == "10"
    assert found[("1 /data/<a>&b", "bytes", "after")].get("data-value") == "0"
    assert plan_svg(name, holders, {}) == svg


def test_no_holder_draws_empty_charts() -> None:
    root = ET.fromstring(plan_svg("empty", {}, {}))
    assert root.find(".//svg:rect[@data-metric]", NS) is None
    assert "no broker holds anything" in [t.text for t in root.iter(f"{{{SVG_NS}}}text")]


def test_loads_of_counts_bytes_replicas_and_preferred_leaders() -> None:
    loads = loads_of([((1, 2), 100), ((2, 3), 50), ((1,), 0)])
    assert loads == {
        Holder(1): HolderLoad(100, 2, 2),
        Holder(2): HolderLoad(150, 2, 1),
        Holder(3): HolderLoad(50, 1, 0),
    }


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0 B"), (512, "512 B"), (1536, "1.5 KiB"), (3 * GIB, "3 GiB"), (GIB + GIB // 4, "1.25 GiB")],
)
def test_human_bytes(n: int, text: str) -> None:
    assert human_bytes(n) == text


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("largest", [0, 1, 3, 7, 10, 999, 1023, 1024, 1_500_000, 5 * GIB + 1, 2**50])
def test_axis_reaches_the_largest_value_in_even_steps(metric: str, largest: int) -> None:
    ax = axis(metric, largest)
    assert ax.top >= largest and ax.top > 0
    values = [v for v, _ in ax.ticks]
    assert values[0] == 0 and values[-1] == ax.top
    steps = {round(b - a, 6) for a, b in itertools.pairwise(values)}
    assert len(steps) == 1
    assert len(values) <= 12
    assert ax.top < 2 * max(largest, 1) + steps.pop()  # not far above the largest


def test_few_brokers_put_the_charts_side_by_side_many_one_under_the_other() -> None:
    def headings(svg: str) -> list[tuple[float, float]]:
        root = ET.fromstring(svg)
        return [
            (float(t.get("x", "")), float(t.get("y", "")))
            for t in root.iter(f"{{{SVG_NS}}}text")
            if t.get("class") == "heading"
        ]

    few = headings(plan_svg("p", BEFORE, AFTER))
    assert len({y for _, y in few}) == 1 and len({x for x, _ in few}) == 3
    many = {Holder(b): HolderLoad(b, b, b) for b in range(1, 41)}
    stacked = headings(plan_svg("p", many, many))
    assert len({x for x, _ in stacked}) == 1 and len({y for _, y in stacked}) == 3


def test_a_thousand_brokers_stay_drawable() -> None:
    loads = {Holder(b): HolderLoad(b * GIB, b, b % 7) for b in range(1, 1001)}
    svg = plan_svg("big", loads, {})
    root = ET.fromstring(svg)
    assert len(bars(svg)) == 1000 * 3 * 2
    assert int(root.get("width", "")) <= 80 + 6 * 1000 + 20
    labels = [t for t in root.iter(f"{{{SVG_NS}}}text") if t.get("class") == "holder"]
    assert len(labels) == 3 * 200  # every fifth broker named: labels do not overlap
    assert [t.text for t in labels[:3]] == ["1", "6", "11"]
    # the largest bar of each chart reaches the axis' top or near it
    assert float(bars(svg)[("1000", "bytes", "before")].get("height", "")) >= 80
