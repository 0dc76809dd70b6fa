"""The Grafana dashboard of reassignd, built with grafana-foundation-sdk (the `monitoring` extra).

    python deploy/monitoring/dashboard.py          # writes reassignd-dashboard.json beside it
    python deploy/monitoring/dashboard.py --check  # exit 1 when the committed JSON differs

The JSON is committed (import it in Grafana: Dashboards > New > Import, then pick a Prometheus
data source); tests/unit/test_monitoring.py regenerates it and fails when the two differ, and
checks every metric queried exists in the controller's registry.

Each instance of the controller is a target: the cluster's figures are read from the active
instance (``of_active``), the process's own (event queue, loop stalls) per instance. The
``reassignd_batch_*`` families with a ``batch`` label and the quota families by entity are served
by /metrics only to a scrape with a token when the controller has a tokens file
(docs/operations.md, "Metrics"); the unlabelled sums are served to every scrape.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from grafana_foundation_sdk.builders import common, dashboard, prometheus, stat, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import (
    BigValueColorMode,
    BigValueGraphMode,
    BigValueTextMode,
    GraphDrawStyle,
    LegendDisplayMode,
    LegendPlacement,
    SortOrder,
    TooltipDisplayMode,
)
from grafana_foundation_sdk.models.dashboard import (
    DashboardCursorSync,
    DataSourceRef,
    Threshold,
    ThresholdsMode,
)

OUTPUT = Path(__file__).with_name("reassignd-dashboard.json")
UID = "reassignd-overview"
DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
RATE = "$__rate_interval"


def of_active(metric: str) -> str:
    """``metric`` as the active instance reports it (a standby's zeros left out)."""
    return f"({metric} and on (job, instance) (reassignd_controller_active == 1))"


def stall_over(ms: int) -> str:
    """Loop stalls per second of ``ms`` or more, per instance (``le`` as 2.x and 3.x spell it)."""
    count = f"sum by (instance) (rate(reassignd_controller_loop_stall_ms_count[{RATE}]))"
    under = (
        f'sum by (instance) (rate(reassignd_controller_loop_stall_ms_bucket{{le=~"{ms}(\\\\.0)?"}}[{RATE}]))'
    )
    return f"{count} - {under}"


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str = ""


@dataclass(frozen=True)
class Graph:
    """A time series panel."""

    title: str
    description: str
    queries: tuple[Query, ...]
    unit: str = "short"
    width: int = 8


@dataclass(frozen=True)
class Figure:
    """A stat panel: one figure, red from ``red_from`` when given."""

    title: str
    description: str
    query: Query
    unit: str = "short"
    red_from: float | None = None
    width: int = 4
    height: int = 4


Panel = Graph | Figure


def q(expr: str, legend: str = "") -> Query:
    return Query(expr, legend)


ROWS: tuple[tuple[str, tuple[Panel, ...]], ...] = (
    (
        "Controller",
        (
            Figure(
                "Active instances",
                "Instances reporting reassignd_controller_active 1: exactly one should",
                q("sum(reassignd_controller_active)"),
                red_from=2,
            ),
            Figure(
                "Controller epoch", "The epoch of the active controller", q("max(reassignd_controller_epoch)")
            ),
            Figure(
                "Live brokers",
                "Registered broker agents",
                q(f"max({of_active('reassignd_controller_live_brokers')})"),
            ),
            Figure(
                "Partitions",
                "Partitions of the cluster",
                q(f"max({of_active('reassignd_controller_partitions')})"),
            ),
            Figure(
                "Offline partitions",
                "Partitions without a live leader",
                q(f"max({of_active('reassignd_controller_offline_partitions')})"),
                red_from=1,
            ),
            Figure(
                "Reassigning partitions",
                "Partitions being moved, by a batch or not",
                q(f"max({of_active('reassignd_controller_reassigning_partitions')})"),
            ),
        ),
    ),
    (
        "Event queue",
        (
            Graph(
                "Events queued",
                "Events waiting in each instance's queue (EventQueueSize)",
                (q("max by (instance) (reassignd_controller_event_queue_size)", "{{instance}}"),),
            ),
            Graph(
                "Time queued (p99)",
                "How long events waited before being handled (EventQueueTimeMs)",
                (
                    q(
                        "histogram_quantile(0.99, sum by (le, instance) "
                        f"(rate(reassignd_controller_event_queue_time_ms_bucket[{RATE}])))",
                        "{{instance}}",
                    ),
                ),
                unit="ms",
            ),
            Graph(
                "Events handled, by event",
                "Events handled per second",
                (q(f"sum by (event) (rate(reassignd_controller_event_time_ms_count[{RATE}]))", "{{event}}"),),
                unit="ops",
            ),
            Graph(
                "Handling time (p99), by event",
                "How long handling an event took (<State>RateAndTimeMs)",
                (
                    q(
                        "histogram_quantile(0.99, sum by (le, event) "
                        f"(rate(reassignd_controller_event_time_ms_bucket[{RATE}])))",
                        "{{event}}",
                    ),
                ),
                unit="ms",
            ),
            Graph(
                "Event loop held 100 ms or more",
                "Stalls of the process's event loop per second: nothing else (HTTP, the Kafka "
                "listener) ran meanwhile; each is logged naming the event",
                (q(stall_over(100), "{{instance}} ≥ 100 ms"), q(stall_over(1000), "{{instance}} ≥ 1 s")),
                unit="ops",
            ),
            Graph(
                "Worst loop stall, by event",
                "The longest the event loop was held since the process started, by the event in hand "
                "(none: between events)",
                (q("max by (during) (reassignd_controller_loop_stall_worst_ms)", "{{during}}"),),
                unit="ms",
            ),
        ),
    ),
    (
        "Moves and bytes in flight",
        (
            Graph(
                "Batch moves, by state",
                "Moves of every batch the active controller knows",
                (q(f"sum by (state) ({of_active('reassignd_batch_moves')})", "{{state}}"),),
            ),
            Graph(
                "Bytes left to copy",
                "Bytes the unfinished batches' moves still have to copy",
                (
                    q("max(reassignd_batches_bytes_remaining)", "all batches"),
                    q("max by (batch) (reassignd_batch_bytes_remaining)", "{{batch}}"),
                ),
                unit="bytes",
            ),
            Graph(
                "Copy rate",
                "The unfinished batches' current copy rate",
                (
                    q("max(reassignd_batches_bytes_per_second)", "all batches"),
                    q("max by (batch) (reassignd_batch_bytes_per_second)", "{{batch}}"),
                ),
                unit="Bps",
            ),
        ),
    ),
    (
        "ETA",
        (
            Figure(
                "ETA of the last batch",
                "Seconds until the last unfinished batch completes at the current rate (0: none moving)",
                q("max(reassignd_batches_eta_seconds)"),
                unit="s",
                width=8,
                height=8,
            ),
            Graph(
                "ETA, by batch",
                "Seconds until each unfinished batch completes at its current rate",
                (q("max by (batch) (reassignd_batch_eta_seconds)", "{{batch}}"),),
                unit="s",
            ),
            Graph(
                "Stuck moves",
                "Running moves past --batch-stuck-after-s copying slower than "
                "--batch-stuck-below-bytes-per-s",
                (
                    q("max(reassignd_batches_stuck_moves)", "all batches"),
                    q("max by (batch) (reassignd_batch_stuck_moves)", "{{batch}}"),
                ),
            ),
        ),
    ),
    (
        "Batches",
        (
            Graph(
                "Batches, by state",
                "Batches the active controller knows",
                (q(f"sum by (state) ({of_active('reassignd_batches')})", "{{state}}"),),
                width=12,
            ),
            Graph(
                "Adaptive concurrency: cap changes",
                "Changes of a broker's cap of a batch's moves: up while the cluster is healthy, down "
                "(halved) when moves hurt it",
                (
                    q(
                        f"sum by (direction) (increase(reassignd_batch_cap_changes_total[{RATE}]))",
                        "{{direction}}",
                    ),
                ),
                width=12,
            ),
        ),
    ),
    (
        "Quotas and throttles",
        (
            Graph(
                "Replication throttles set by batches",
                "Throttles batches have set and not yet restored, by kind",
                (q(f"sum by (kind) ({of_active('reassignd_batch_throttles')})", "{{kind}}"),),
            ),
            Graph(
                "Quota entities",
                "Users and client ids with a controller-mutation bucket, and those being throttled",
                (
                    q("max(reassignd_quota_entities)", "with a bucket"),
                    q("max(reassignd_quota_throttled_entities)", "throttled"),
                ),
            ),
            Graph(
                "Topics rejected by the quota",
                "Topics rejected with THROTTLING_QUOTA_EXCEEDED (KIP-599), over every entity",
                (q("max(reassignd_quota_rejected_topics_overall)", "rejected"),),
            ),
            Graph(
                "Throttle time, by entity",
                "The throttle time of each entity's last rejected topic",
                (
                    q(
                        "max by (user, client_id) (reassignd_quota_throttle_time_ms)",
                        "{{user}} {{client_id}}",
                    ),
                ),
                unit="ms",
                width=24,
            ),
        ),
    ),
    (
        "Failovers and refusals",
        (
            Graph(
                "Elections won and the epoch",
                "Times an instance became the active controller; a rising epoch is a failover",
                (
                    q(
                        f"sum by (instance) (increase(reassignd_controller_elections_won_total[{RATE}]))",
                        "{{instance}}",
                    ),
                    q("max(reassignd_controller_epoch)", "epoch"),
                ),
            ),
            Graph(
                "Resignations, by reason",
                "Times an instance stopped being the active controller",
                (
                    q(
                        f"sum by (reason) (increase(reassignd_controller_resignations_total[{RATE}]))",
                        "{{reason}}",
                    ),
                ),
            ),
            Graph(
                "Refused inputs and reloads",
                "Inputs refused because they fail the same way every time (GET /v1/status lists them), "
                "and the reloads after a refused event",
                (
                    q(
                        f"sum by (kind) (increase(reassignd_controller_refused_inputs_total[{RATE}]))",
                        "{{kind}}",
                    ),
                    q(f"sum(increase(reassignd_controller_reloads_total[{RATE}]))", "reloads"),
                ),
            ),
            Graph(
                "Znodes not decoded, by kind",
                "Malformed znodes skipped (GET /v1/status lists them)",
                (
                    q(
                        f"sum by (kind) (increase(reassignd_controller_znode_decode_errors_total[{RATE}]))",
                        "{{kind}}",
                    ),
                ),
            ),
            Graph(
                "Control requests to agents, by outcome",
                "LeaderAndIsr, UpdateMetadata and StopReplica requests per second; a dropped one was "
                "refused for good",
                (
                    q(
                        f"sum by (request, outcome) (rate(reassignd_control_requests_total[{RATE}]))",
                        "{{request}} {{outcome}}",
                    ),
                ),
                unit="ops",
                width=16,
            ),
        ),
    ),
    (
        "Event stream to Kafka",
        (
            Graph(
                "Event records",
                "Records sent to the events topic and dropped because the buffer was full, per "
                "second (with --events-bootstrap-servers)",
                (
                    q(f"sum(rate(reassignd_events_sent_total[{RATE}]))", "sent"),
                    q(f"sum(rate(reassignd_events_dropped_total[{RATE}]))", "dropped"),
                ),
                unit="ops",
                width=12,
            ),
            Graph(
                "Event records buffered",
                "Records waiting to be sent to Kafka",
                (q("max by (instance) (reassignd_events_buffered)", "{{instance}}"),),
                width=12,
            ),
        ),
    ),
)


def _target(query: Query, ref_id: str) -> prometheus.Dataquery:
    target = prometheus.Dataquery().expr(query.expr).ref_id(ref_id).datasource(DATASOURCE)
    return target.legend_format(query.legend) if query.legend else target


def _graph(panel: Graph) -> timeseries.Panel:
    built = (
        timeseries.Panel()
        .title(panel.title)
        .description(panel.description)
        .datasource(DATASOURCE)
        .unit(panel.unit)
        .min(0)
        .height(8)
        .span(panel.width)
        .draw_style(GraphDrawStyle.LINE)
        .line_width(1)
        .fill_opacity(10)
        .legend(
            common.VizLegendOptions()
            .display_mode(LegendDisplayMode.LIST)
            .placement(LegendPlacement.BOTTOM)
            .show_legend(True)
        )
        .tooltip(common.VizTooltipOptions().mode(TooltipDisplayMode.MULTI).sort(SortOrder.DESCENDING))
    )
    for i, query in enumerate(panel.queries):
        built = built.with_target(_target(query, chr(ord("A") + i)))
    return built


def _figure(panel: Figure) -> stat.Panel:
    steps = [Threshold(value=None, color="green")]
    if panel.red_from is not None:
        steps.append(Threshold(value=panel.red_from, color="red"))
    return (
        stat.Panel()
        .title(panel.title)
        .description(panel.description)
        .datasource(DATASOURCE)
        .unit(panel.unit)
        .height(panel.height)
        .span(panel.width)
        .thresholds(dashboard.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE).steps(steps))
        .reduce_options(common.ReduceDataOptions().calcs(["lastNotNull"]).values(False))
        .graph_mode(BigValueGraphMode.AREA)
        .color_mode(BigValueColorMode.VALUE)
        .text_mode(BigValueTextMode.AUTO)
        .with_target(_target(panel.query, "A"))
    )


def build() -> dict[str, object]:
    """The dashboard as Grafana's JSON model."""
    board = (
        dashboard.Dashboard("reassignd")
        .uid(UID)
        .description(
            "The reassignd controller: event queue, moves, bytes and ETA, batches, quotas and "
            "throttles, failovers and refusals (deploy/monitoring/dashboard.py)"
        )
        .tags(["reassignd", "kafka"])
        .editable()
        .tooltip(DashboardCursorSync.CROSSHAIR)
        .refresh("30s")
        .time("now-3h", "now")
        .timezone("browser")
        .with_variable(dashboard.DatasourceVariable("datasource").label("Data source").type("prometheus"))
    )
    for title, panels in ROWS:
        board = board.with_row(dashboard.Row(title))
        for panel in panels:
            board = board.with_panel(_graph(panel) if isinstance(panel, Graph) else _figure(panel))
    encoded: dict[str, object] = json.loads(json.dumps(board.build(), cls=JSONEncoder))
    return encoded


def render() -> str:
    return json.dumps(build(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--check"]:
        if OUTPUT.read_text() != text:
            print(f"{OUTPUT} is not what {Path(__file__).name} builds: run it", file=sys.stderr)
            return 1
        return 0
    if argv:
        print("usage: dashboard.py [--check]", file=sys.stderr)
        return 2
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
