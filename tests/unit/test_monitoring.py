"""deploy/monitoring/: the committed dashboard is what its generator builds, every metric a panel or
a rule queries is one the controller exports, and the alert rules pass ``promtool check rules`` and
their own ``promtool test rules`` cases (Debian's ``prometheus`` package: skipped without it, which
only the unit loop lacks). The scrape of a running controller: tests/integration/test_monitoring_scrape.py."""

from __future__ import annotations

import json
import subprocess

import pytest

from reassignd.controller.runtime.controller import Controller
from reassignd.controller.settings import ControllerSettings
from reassignd.http.batch_metrics import collector_for
from reassignd.stream.kafka_sink import EventMetrics
from reassignd.zk.client import ZkClient
from reassignd.zk.values import ZkSettings
from tests.monitoring import (
    DASHBOARD_JSON,
    MONITORING,
    RULES,
    RULES_TEST,
    Expression,
    exported_names,
    load_generator,
    metrics_in,
    panel_expressions,
    promtool,
    rule_expressions,
)


def controller_metric_names() -> set[str]:
    """What GET /metrics can show: a controller's registry, with the batch progress families
    /metrics adds and the event-stream ones --events-bootstrap-servers adds. Nothing connects."""
    settings = ControllerSettings("127.0.0.1:2181", http_port=0)
    controller = Controller(settings, ZkClient(ZkSettings(settings.zk_connect, 6.0, 10.0)))
    registry = controller.metrics.registry
    EventMetrics(registry)
    collector_for(registry)
    return exported_names(registry)


def test_the_committed_dashboard_is_what_the_generator_builds() -> None:
    pytest.importorskip("grafana_foundation_sdk", reason="the monitoring extra is not installed")
    generator = load_generator()
    assert DASHBOARD_JSON.read_text() == generator.render(), (
        "deploy/monitoring/reassignd-dashboard.json is stale: run python deploy/monitoring/dashboard.py"
    )
    assert generator.main(["--check"]) == 0


def test_the_dashboard_covers_what_an_operator_watches() -> None:
    board = json.loads(DASHBOARD_JSON.read_text())
    rows = [p["title"] for p in board["panels"] if p["type"] == "row"]
    assert rows == [
        "Controller",
        "Event queue",
        "Moves and bytes in flight",
        "ETA",
        "Batches",
        "Quotas and throttles",
        "Failovers and refusals",
        "Event stream to Kafka",
    ]
    queried = set().union(*(metrics_in(e.expr) for e in panel_expressions(board)))
    for needed in (
        "reassignd_controller_event_queue_size",
        "reassignd_controller_reassigning_partitions",
        "reassignd_batches_bytes_remaining",
        "reassignd_batch_eta_seconds",
        "reassignd_batches",
        "reassignd_batch_throttles",
        "reassignd_quota_throttled_entities",
        "reassignd_controller_elections_won_total",
        "reassignd_controller_refused_inputs_total",
        "reassignd_events_dropped_total",
    ):
        assert needed in queried
    # every panel asks the data source the import picks
    assert {p["datasource"]["uid"] for p in board["panels"] if p["type"] != "row"} == {"${datasource}"}
    assert [v["name"] for v in board["templating"]["list"]] == ["datasource"]


def test_every_metric_queried_exists_in_the_controller() -> None:
    exported = controller_metric_names()
    expressions = panel_expressions() + rule_expressions()
    assert len(expressions) > 30
    unknown = [
        f"{e.where}: {sorted(metrics_in(e.expr) - exported)}"
        for e in expressions
        if metrics_in(e.expr) - exported
    ]
    assert unknown == []
    assert all(metrics_in(e.expr) for e in expressions), "an expression queries none of our metrics"


def test_the_name_check_can_fail() -> None:
    exported = controller_metric_names()
    assert "reassignd_controller_epoch" in exported
    assert "reassignd_controller_refused_inputs_total" in exported  # labelled, no sample yet
    assert "reassignd_controller_loop_stall_ms_bucket" in exported
    typo = Expression(
        "panel x", 'sum(rate(reassignd_controller_refused_input_total{kind="reassignd_x"}[5m]))'
    )
    assert metrics_in(typo.expr) - exported == {"reassignd_controller_refused_input_total"}


def test_the_rules_alert_on_what_the_issue_asks() -> None:
    alerts = {e.where.removeprefix("rule ") for e in rule_expressions()}
    assert alerts == {
        "ReassigndMovesStuck",
        "ReassigndReassignmentNotProgressing",
        "ReassigndBatchPastEta",
        "ReassigndOfflinePartitions",
        "ReassigndControllerFlapping",
        "ReassigndNoActiveController",
        "ReassigndRefusedInputs",
        "ReassigndEventLoopStalled",
    }
    tested = RULES_TEST.read_text()
    for alert in alerts:  # each has a case of its own in the promtool test file
        assert f"alertname: {alert}\n" in tested, alert


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    tool = promtool()
    if tool is None:
        pytest.skip(
            "promtool is not installed (Debian's prometheus package; scripts/bootstrap.sh installs it)"
        )
    return subprocess.run(
        [tool, *args], cwd=MONITORING, capture_output=True, text=True, timeout=60, check=False
    )


def test_promtool_check_rules() -> None:
    done = _promtool("check", "rules", RULES.name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rule_expressions())} rules found" in done.stdout


def test_promtool_test_rules() -> None:
    done = _promtool("test", "rules", RULES_TEST.name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_promtool_test_rules_fails_on_a_wrong_expectation(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The rule tests can fail: the same cases expecting the offline alert an evaluation early."""
    work = tmp_path_factory.mktemp("rules")
    (work / RULES.name).write_text(RULES.read_text())
    wrong = RULES_TEST.read_text().replace(
        "      - eval_time: 2m\n        alertname: ReassigndOfflinePartitions\n        exp_alerts: []",
        "      - eval_time: 2m\n        alertname: ReassigndOfflinePartitions\n        exp_alerts:\n          - exp_labels: { job: reassignd, severity: critical }",
    )
    assert wrong != RULES_TEST.read_text()
    (work / RULES_TEST.name).write_text(wrong)
    tool = promtool()
    if tool is None:
        pytest.skip("promtool is not installed")
    done = subprocess.run(
        [tool, "test", "rules", RULES_TEST.name],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "ReassigndOfflinePartitions" in done.stdout + done.stderr
