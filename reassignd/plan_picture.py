"""A plan's picture: each broker's load before and after, as an SVG document. Pure.

Three grouped bar charts: bytes, replicas and (preferred) leaders, side by side for a few brokers,
one under the other for more (groups narrow down to 6 units and every n-th is labelled, so a
thousand brokers still make a picture 6,100 units wide). Each chart has one group per holder (a broker, or one of its log directories where it has several), a
"before" and an "after" bar in each group, a y axis in human units (binary units for bytes, plain
counts otherwise), a legend and a title naming the plan.

``reassignd feed plan`` draws the plan's ``before``/``after`` loads into ``plan.svg``; the status
page shows the same picture for a batch (``GET /v1/batches/{batch_id}/picture.svg``).

The document is built with :mod:`xml.etree.ElementTree`, so every text and attribute is escaped,
and it is deterministic: the same figures give the same bytes. Each bar carries its figures in
``data-*`` attributes (``data-broker``, ``data-log-dir`` where set, ``data-metric``,
``data-phase``, ``data-value``), which a reader (and the tests) can take back without measuring.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

SVG_NS: Final = "http://www.w3.org/2000/svg"
METRICS: Final = ("bytes", "replicas", "leaders")
PHASES: Final = ("before", "after")
COLOURS: Final = {"before": "#9aa3b5", "after": "#2563eb"}

# layout, in SVG user units (pixels at 100 %)
_LEFT = 80  # room for the y axis' labels
_RIGHT = 20
_TOP = 70  # title, subtitle and legend
_CHART_H = 230  # one chart: its heading, plot and x labels
_PLOT_H = 160
_GROUP_MAX_W = 40.0  # a group of two bars and the gap after them, at most ...
_GROUP_MIN_W = 6.0  # ... and at least (a thousand brokers: 6,000 wide)
_PLOTS_MAX_W = 1200.0  # groups narrow down to fit this, not below the minimum
_ROW_MAX_W = 420.0  # charts this narrow stand side by side rather than one under the other
_LABEL_W = 28.0  # room a holder's label needs: labels are thinned out below it
_MIN_WIDTH = 480
_TICKS = 4
_BYTE_UNITS: Final = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


@dataclass(frozen=True, slots=True, order=True)
class Holder:
    """What a group of bars stands for: a broker, or one of its log directories."""

    broker: int
    log_dir: str | None = None

    @property
    def label(self) -> str:
        return str(self.broker) if self.log_dir is None else f"{self.broker} {self.log_dir}"


@dataclass(frozen=True, slots=True)
class HolderLoad:
    """What a holder holds: bytes (each replica counts its partition's size), replicas, and
    partitions it is the preferred leader of (first replica)."""

    size_bytes: int = 0
    replicas: int = 0
    leaders: int = 0

    def value(self, metric: str) -> int:
        return {"bytes": self.size_bytes, "replicas": self.replicas, "leaders": self.leaders}[metric]


NONE: Final = HolderLoad()


def loads_of(partitions: Iterable[tuple[Sequence[int], int]]) -> dict[Holder, HolderLoad]:
    """Each broker's load from ``(replicas, size_bytes)`` per partition (first replica: the
    preferred leader)."""
    acc: dict[int, list[int]] = {}
    for replicas, size_bytes in partitions:
        for i, b in enumerate(replicas):
            v = acc.setdefault(b, [0, 0, 0])
            v[0] += size_bytes
            v[1] += 1
            v[2] += i == 0
    return {Holder(b): HolderLoad(v[0], v[1], v[2]) for b, v in acc.items()}


def human_bytes(n: float) -> str:
    """``n`` in binary units: ``0 B``, ``512 B``, ``1.5 KiB``, ``2.25 GiB``."""
    i = 0
    while abs(n) >= 1024 and i < len(_BYTE_UNITS) - 1:
        n /= 1024
        i += 1
    return f"{n:.0f} {_BYTE_UNITS[i]}" if i == 0 else f"{_num(n)} {_BYTE_UNITS[i]}"


def _num(x: float) -> str:
    """Up to two decimals, without trailing zeros."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _nice_step(raw: float) -> float:
    """The smallest of 1, 2, 5 × 10^k at or above ``raw`` (> 0)."""
    power: float = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw * (1 - 1e-9):
            return m * power
    return 10 * power  # pragma: no cover (10 × power always suffices)


@dataclass(frozen=True, slots=True)
class Axis:
    """A chart's y axis: its top value and its ticks, each with its label."""

    top: float
    ticks: tuple[tuple[float, str], ...]


def axis(metric: str, largest: int) -> Axis:
    """The y axis for values up to ``largest``: bytes in the unit of the largest value, counts
    in whole steps; the top is a whole number of steps (at least one step above zero)."""
    if metric == "bytes":
        unit_i = 0
        while largest >= 1024 ** (unit_i + 1) and unit_i < len(_BYTE_UNITS) - 1:
            unit_i += 1
        unit = 1024**unit_i
        step = _nice_step(max(largest / unit, 1) / _TICKS) * unit
        if unit_i == 0:
            step = max(1.0, math.ceil(step))
    else:
        step = max(1.0, math.ceil(_nice_step(max(largest, 1) / _TICKS)))
    steps = max(1, math.ceil(largest / step - 1e-9))
    ticks = []
    for k in range(steps + 1):
        v = k * step
        ticks.append((v, human_bytes(v) if metric == "bytes" else _num(v)))
    return Axis(steps * step, tuple(ticks))


def _fmt(x: float) -> str:
    """A coordinate: two decimals at most, so the output does not depend on float noise."""
    return _num(round(x, 2))


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    node = ET.SubElement(parent, tag, {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()})
    if text is not None:
        node.text = text
    return node


def _value_text(metric: str, value: int) -> str:
    return human_bytes(value) if metric == "bytes" else str(value)


@dataclass(frozen=True, slots=True)
class PictureLayout:
    """Where the charts go: one under the other, or side by side when they are narrow."""

    holders: int
    group_w: float
    label_every: int  # every n-th holder is labelled
    side_by_side: bool

    @classmethod
    def of(cls, holders: int) -> PictureLayout:
        group_w = min(_GROUP_MAX_W, max(_GROUP_MIN_W, _PLOTS_MAX_W / max(holders, 1)))
        label_every = max(1, math.ceil(_LABEL_W / group_w))
        chart_w = _LEFT + group_w * holders + _RIGHT
        return cls(holders, group_w, label_every, chart_w <= _ROW_MAX_W)

    @property
    def bar_w(self) -> float:
        return self.group_w * 0.35

    @property
    def chart_w(self) -> float:
        return max(_LEFT + self.group_w * self.holders + _RIGHT, _MIN_WIDTH / 3 if self.side_by_side else 0)

    def origin(self, k: int) -> tuple[float, float]:
        """The top left corner of the k-th chart."""
        return (k * self.chart_w, _TOP) if self.side_by_side else (0.0, _TOP + k * _CHART_H)

    @property
    def size(self) -> tuple[int, int]:
        n = len(METRICS)
        if self.side_by_side:
            return max(_MIN_WIDTH, math.ceil(self.chart_w * n)), _TOP + _CHART_H
        return max(_MIN_WIDTH, math.ceil(self.chart_w)), _TOP + _CHART_H * n


def _chart(
    svg: ET.Element,
    metric: str,
    origin: tuple[float, float],
    holders: Sequence[Holder],
    figures: Mapping[str, Mapping[Holder, HolderLoad]],
    layout: PictureLayout,
) -> None:
    largest = max((figures[p].get(h, NONE).value(metric) for h in holders for p in PHASES), default=0)
    ax = axis(metric, largest)
    chart = _el(svg, "g", class_="chart", data_metric=metric)
    left, top_y = origin[0] + _LEFT, origin[1]
    plot_top = top_y + 24
    base = plot_top + _PLOT_H
    unit = " (preferred)" if metric == "leaders" else ""
    _el(chart, "text", f"{metric}{unit}", x=_fmt(left), y=_fmt(top_y + 14), class_="heading")
    right = left + layout.group_w * len(holders)
    for v, label in ax.ticks:
        y = base - (v / ax.top) * _PLOT_H
        _el(chart, "line", x1=_fmt(left), x2=_fmt(right), y1=_fmt(y), y2=_fmt(y), class_="grid")
        _el(chart, "text", label, x=_fmt(left - 6), y=_fmt(y + 4), class_="tick")
    _el(chart, "line", x1=_fmt(left), x2=_fmt(left), y1=_fmt(plot_top), y2=_fmt(base), class_="axis")
    bar_w = layout.bar_w
    for i, holder in enumerate(holders):
        gx = left + i * layout.group_w + (layout.group_w - 2 * bar_w) / 2
        for j, phase in enumerate(PHASES):
            value = figures[phase].get(holder, NONE).value(metric)
            h = (value / ax.top) * _PLOT_H
            attrs = {
                "x": _fmt(gx + j * bar_w),
                "y": _fmt(base - h),
                "width": _fmt(bar_w),
                "height": _fmt(h),
                "fill": COLOURS[phase],
                "class": f"plan-bar {phase}",
                "data-broker": str(holder.broker),
            }
            if holder.log_dir is not None:
                attrs["data-log-dir"] = holder.log_dir
            attrs |= {"data-metric": metric, "data-phase": phase, "data-value": str(value)}
            bar = ET.SubElement(chart, "rect", attrs)
            _el(bar, "title", f"{holder.label} {metric} {phase}: {_value_text(metric, value)}")
        if i % layout.label_every == 0:
            _el(chart, "text", holder.label, x=_fmt(gx + bar_w), y=_fmt(base + 16), class_="holder")


# scoped to the picture: an SVG put inline in a page shares the page's style sheet both ways
_STYLE = (
    ".plan-picture text{font:12px system-ui,sans-serif;fill:#1d2330}"
    ".plan-picture .title{font-size:15px;font-weight:600}"
    ".plan-picture .subtitle,.plan-picture .tick,.plan-picture .holder{fill:#6b7385}"
    ".plan-picture .heading{font-weight:600}.plan-picture .tick{text-anchor:end}"
    ".plan-picture .holder{text-anchor:middle}"
    ".plan-picture .grid{stroke:#e3e6ee}.plan-picture .axis{stroke:#6b7385}"
)


def plan_svg(
    name: str,
    before: Mapping[Holder, HolderLoad],
    after: Mapping[Holder, HolderLoad],
    subtitle: str = "",
) -> str:
    """The SVG document (text, with its XML declaration) of ``before`` and ``after``, titled
    ``name``; a holder missing from one side counts zero there."""
    holders = sorted(set(before) | set(after))
    layout = PictureLayout.of(len(holders))
    width, height = layout.size
    svg = ET.Element(
        "svg",
        {
            "xmlns": SVG_NS,
            "width": str(width),
            "height": str(height),
            "viewBox": f"0 0 {width} {height}",
            "role": "img",
            "class": "plan-picture",
        },
    )
    _el(svg, "title", f"{name}: per-broker load before and after")
    _el(svg, "style", _STYLE)
    _el(svg, "rect", x="0", y="0", width=str(width), height=str(height), fill="#ffffff")
    _el(svg, "text", name, x=_fmt(_LEFT), y="22", class_="title")
    if subtitle:
        _el(svg, "text", subtitle, x=_fmt(_LEFT), y="40", class_="subtitle")
    legend = _el(svg, "g", class_="legend")
    for i, phase in enumerate(PHASES):
        x = _LEFT + i * 80
        _el(legend, "rect", x=_fmt(x), y="50", width="12", height="12", fill=COLOURS[phase])
        _el(legend, "text", phase, x=_fmt(x + 16), y="60")
    if not holders:
        _el(svg, "text", "no broker holds anything", x=_fmt(_LEFT), y=_fmt(_TOP + 30))
    figures = {"before": before, "after": after}
    for k, metric in enumerate(METRICS):
        _chart(svg, metric, layout.origin(k), holders, figures, layout)
    ET.indent(svg, space="")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(svg, encoding="unicode") + "\n"
