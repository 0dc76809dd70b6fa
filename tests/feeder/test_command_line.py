"""``reassignd feed plan``'s command line without a JVM: bad arguments and bad input are one line
on stderr and exit 2 (never a traceback); no pyspark is one line and exit 1; the controller never
imports pyspark."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reassignd.cli import run
from reassignd.feeder.goals import parse_goal
from reassignd.feeder.plan_command import load_cluster, plan_settings

SNAPSHOT = {
    "brokers": [{"id": b, "rack": f"r{b % 3}"} for b in range(1, 7)],
    "topics": [
        {
            "name": "t",
            "partitions": [{"partition": p, "replicas": [1 + p % 6, 1 + (p + 1) % 6]} for p in range(12)],
        }
    ],
}


def feed(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(["feed", *argv], env or {}, out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(SNAPSHOT))
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "choose a verb: plan"),
        (["plan", "--cluster-file", "x", "--out", "d"], "missing --goal"),
        (
            ["plan", "--goal", "decommission:1", "--out", "d"],
            "needs --bootstrap-controller URL or --cluster-file",
        ),
        (["plan", "--goal", "decommission:1", "--cluster-file", "x"], "needs --out DIR (or --dry-run)"),
        (
            ["plan", "--goal", "shrink:1", "--cluster-file", "x", "--out", "d"],
            "goal 'shrink:1': unknown goal",
        ),
        (
            ["plan", "--goal", "add:1", "--cluster-file", "x", "--dry-run", "--topics", "("],
            "--topics: '(': invalid regular",
        ),
        (
            ["plan", "--goal", "add:1", "--cluster-file", "x", "--dry-run", "--seed", "-1"],
            "--seed: must be >= 0",
        ),
        (
            ["plan", "--goal", "add:1", "--cluster-file", "x", "--dry-run", "--exclude-brokers", "a"],
            "--exclude-brokers",
        ),
        (
            ["plan", "--goal", "add:1", "--bootstrap-controller", "ftp://x", "--dry-run"],
            "--bootstrap-controller",
        ),
        (["plan", "--bogus"], "reassignd feed plan: error: unknown option --bogus"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str) -> None:
    code, out, err = feed(args)
    assert code == 2
    assert message in err and err.count("\n") == 1 and out == ""


def test_bad_input_files_name_the_file(tmp_path: Path, snapshot: Path) -> None:
    missing = tmp_path / "nope.json"
    code, _, err = feed(["plan", "--goal", "decommission:1", "--cluster-file", str(missing), "--dry-run"])
    assert code == 2 and f"cannot read --cluster-file {missing}: No such file or directory" in err
    broken = tmp_path / "broken.json"
    broken.write_text(
        '{"brokers": [{"id": 1}], "topics": [{"name": "t", "partitions": [{"partition": "0"}]}]}'
    )
    code, _, err = feed(["plan", "--goal", "decommission:1", "--cluster-file", str(broken), "--dry-run"])
    assert code == 2 and f"{broken}: topics[0].partitions[0].replicas: expected an array" in err
    sizes = tmp_path / "sizes.txt"
    sizes.write_text("Querying brokers for log directories information\n")
    code, _, err = feed(
        [
            "plan",
            "--goal",
            "decommission:1",
            "--cluster-file",
            str(snapshot),
            "--sizes",
            str(sizes),
            "--dry-run",
        ]
    )
    assert code == 2 and f"{sizes}: no JSON object found" in err


def test_partitions_without_a_size_are_reported(tmp_path: Path, snapshot: Path) -> None:
    sizes = tmp_path / "sizes.json"
    sizes.write_text(
        json.dumps(
            {"brokers": [{"broker": 2, "logDirs": [{"partitions": [{"partition": "t-0", "size": 5}]}]}]}
        )
    )
    settings = plan_settings(
        {
            "goal": (parse_goal("decommission:1"),),
            "cluster-file": str(snapshot),
            "sizes": str(sizes),
            "dry-run": True,
        }
    )
    err = io.StringIO()
    cluster = load_cluster(settings, err)
    assert cluster.rows[0][2] == 5 and all(r[2] == 0 for r in cluster.rows[1:])
    assert f"warning: 11 of 12 partitions have no size in {sizes}" in err.getvalue()


def test_goals_naming_what_the_cluster_lacks(snapshot: Path) -> None:
    code, _, err = feed(["plan", "--goal", "decommission:9", "--cluster-file", str(snapshot), "--dry-run"])
    assert code == 2 and "goal decommission:9: unknown brokers [9]" in err
    code, _, err = feed(["plan", "--goal", "rf:other=2", "--cluster-file", str(snapshot), "--dry-run"])
    assert code == 2 and "no topic 'other'" in err


def test_flags_from_environment_and_config_file(tmp_path: Path, snapshot: Path) -> None:
    env = {"REASSIGND_CLUSTER_FILE": str(tmp_path / "from-env.json"), "REASSIGND_DRY_RUN": "1"}
    code, _, err = feed(["plan", "--goal", "decommission:1"], env)
    assert code == 2 and "from-env.json" in err
    config = tmp_path / "feed.toml"
    config.write_text(f'[feed]\ncluster-file = "{tmp_path / "from-file.json"}"\ndry-run = true\n')
    code, _, err = feed(["plan", "--goal", "decommission:1", "--config", str(config)])
    assert code == 2 and "from-file.json" in err


def test_several_goals_in_one_variable(snapshot: Path) -> None:
    env = {"REASSIGND_GOAL": "decommission:1,2; rf:nope=2"}
    code, _, err = feed(["plan", "--cluster-file", str(snapshot), "--dry-run"], env)
    assert code == 2 and "goal rf:nope=2: no topic 'nope'" in err  # decommission:1,2 parsed whole


def test_unreachable_controller_is_exit_1() -> None:
    code, _, err = feed(
        ["plan", "--goal", "decommission:1", "--bootstrap-controller", "http://127.0.0.1:9", "--dry-run"]
    )
    assert code == 1 and "cannot reach the controller at http://127.0.0.1:9" in err


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_without_pyspark_the_plan_says_how_to_install_it(snapshot: Path, tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['pyspark'] = None; sys.modules['pyspark.sql'] = None\n"
        "from reassignd.cli import main; main()\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "feed",
            "plan",
            "--goal",
            "decommission:1",
            "--cluster-file",
            str(snapshot),
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert "pip install 'reassignd[feeder]'" in proc.stderr and "Traceback" not in proc.stderr


def test_the_controller_and_the_cli_do_not_import_pyspark() -> None:
    proc = run_python(
        "import sys, reassignd.cli, reassignd.service, reassignd.feeder.command_line, reassignd.feeder.planner\n"
        "assert not [m for m in sys.modules if m.startswith('pyspark')], 'pyspark imported'\n"
    )
    assert proc.returncode == 0, proc.stderr
