"""``feed plan``'s ``plan.svg`` opened on its own in Chromium, as a user opens the file: it renders
as an image, and the bars as drawn (their rendered heights) are the plan's figures, one scale per
chart. Saves ``reassignd-plan-svg.png`` in the temporary directory (printed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reassignd.feeder.goals import Decommission, PlanOptions, Rebalance
from reassignd.feeder.model import CURRENT, ORIGINAL, PARTITION, SIZE, TOPIC
from reassignd.feeder.outputs import batches_document, picture_file
from reassignd.feeder.planner import plan_locally
from reassignd.plan_picture import METRICS, loads_of
from tests.browser.chromium import NEEDS_CHROMIUM, SHOTS
from tests.feeder.conftest import kafka_cluster

pytestmark = [pytest.mark.timeout(120), NEEDS_CHROMIUM]
pytest.importorskip("playwright.async_api")


async def test_plan_svg_renders_the_plans_figures(tmp_path: Path, browser: object) -> None:
    cluster = kafka_cluster(brokers=6, racks=3, topics=4, partitions=12)
    result = plan_locally(cluster, [Decommission(frozenset({6})), Rebalance("bytes")], PlanOptions(seed=1))
    assert result.moves
    svg_file = tmp_path / "plan.svg"
    svg_file.write_text(picture_file(result, batches_document(result, "now")), encoding="utf-8")
    moved = {(r[TOPIC], r[PARTITION]): r[CURRENT] for r in result.moves}
    expected = {
        "before": loads_of((r[ORIGINAL], r[SIZE]) for r in cluster.rows),
        "after": loads_of((moved.get((r[TOPIC], r[PARTITION]), r[ORIGINAL]), r[SIZE]) for r in cluster.rows),
    }
    page = await browser.new_page(viewport={"width": 900, "height": 800})  # type: ignore[attr-defined]
    try:
        await page.goto(svg_file.as_uri())
        bars = await page.eval_on_selector_all(
            "rect[data-metric]",
            "rs => rs.map(r => [Number(r.dataset.broker), r.dataset.metric, r.dataset.phase,"
            " Number(r.dataset.value), r.getBoundingClientRect().height])",
        )
        assert len(bars) == 6 * len(METRICS) * 2
        for metric in METRICS:
            scales = set()
            for broker, m, phase, value, height in bars:
                if m != metric:
                    continue
                load = next((v for h, v in expected[phase].items() if h.broker == broker), None)
                assert value == (0 if load is None else load.value(metric)), (broker, metric, phase)
                if value:
                    scales.add(
                        round(height / value, 6) if metric != "bytes" else round(height / value * 2**30, 3)
                    )
                else:
                    assert height == 0
            # one scale per chart (heights are rounded to 0.01 units: within that)
            assert max(scales) - min(scales) <= 0.02 * max(scales), (metric, scales)
        assert [v for b, m, p, v, _ in bars if (b, m, p) == (6, "replicas", "after")] == [0]
        path = SHOTS / "reassignd-plan-svg.png"
        size = await page.eval_on_selector("svg", "s => [s.width.baseVal.value, s.height.baseVal.value]")
        await page.set_viewport_size({"width": int(size[0]), "height": int(size[1])})
        await page.screenshot(path=str(path))  # full_page waits on an SVG document forever
        print(f"plan.svg screenshot: {path}")
    finally:
        await page.close()
