"""``reassignd feed plan``: settings from the merged flag values, then the run: read the
cluster, plan on Spark, write the files, print the summary.

Exit codes: 2 for bad arguments or unusable input (one line naming the file and place), 1 for
anything else (controller unreachable, pyspark missing, Spark failing), never a traceback.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from reassignd.admin.connection import tls_of
from reassignd.admin.settings import REQUEST_TIMEOUT_S
from reassignd.api_client.errors import ClientError
from reassignd.feeder.command_line import UsageError
from reassignd.feeder.goals import (
    AddBrokers,
    Decommission,
    Goal,
    GoalError,
    PlanOptions,
    ReplicationFactor,
)
from reassignd.feeder.inputs import (
    InputError,
    parse_cluster_file,
    parse_dir_places,
    parse_log_dirs,
    sizes_document,
)
from reassignd.feeder.model import Cluster, with_dirs, with_sizes
from reassignd.feeder.outputs import (
    DEFAULT_BATCH_SIZE,
    batches_document,
    picture_file,
    plan_file,
    rollback_file,
    summary_text,
)
from reassignd.feeder.planner import PlanResult
from reassignd.tls import SYSTEM_CAS, ClientTls

log = logging.getLogger("reassignd.feeder")


@dataclass(frozen=True, slots=True)
class PlanSettings:
    goals: tuple[Goal, ...]
    options: PlanOptions
    out: str | None
    dry_run: bool = False
    bootstrap_controller: str | None = None
    auth_token: str | None = None
    request_timeout_s: float = REQUEST_TIMEOUT_S
    tls: ClientTls = SYSTEM_CAS  # how an https:// controller is verified
    sizes: str | None = None
    cluster_file: str | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    tasks: int | None = None
    master: str | None = None  # None: spark-submit's, else local[*]


def plan_settings(values: Mapping[str, Any]) -> PlanSettings:
    """The settings of a plan from the merged option values (keyed by flag, parsed by the
    command-line engine); the TLS files are loaded here (UsageError, one line)."""
    goals = values.get("goal") or ()
    exclude = values.get("exclude-brokers")
    options = PlanOptions(
        topics=values.get("topics"),
        exclude_brokers=frozenset() if exclude is None else exclude,
        max_move_bytes=values.get("max-move-bytes"),
        seed=values.get("seed") or 0,
    )
    try:
        tls = tls_of(values)
    except ValueError as e:
        raise UsageError(str(e)) from None
    timeout = values.get("request-timeout-s")
    return PlanSettings(
        goals=tuple(goals),
        options=options,
        out=values.get("out"),
        dry_run=bool(values.get("dry-run")),
        bootstrap_controller=values.get("bootstrap-controller"),
        auth_token=values.get("auth-token"),
        request_timeout_s=REQUEST_TIMEOUT_S if timeout is None else float(timeout),
        tls=tls,
        sizes=values.get("sizes"),
        cluster_file=values.get("cluster-file"),
        batch_size=values.get("batch-size") or DEFAULT_BATCH_SIZE,
        tasks=values.get("tasks"),
        master=values.get("master") or None,
    )


def _read(path: str, flag: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise InputError(f"cannot read {flag} {path}: {reason}") from None


def check_goals(goals: tuple[Goal, ...], cluster: Cluster) -> None:
    """Goals that name brokers or topics the cluster does not have: GoalError."""
    topics = {r[0] for r in cluster.rows}
    for goal in goals:
        match goal:
            case Decommission(brokers=b) | AddBrokers(brokers=b):
                unknown = sorted(b - set(cluster.racks))
                if unknown:
                    raise GoalError(
                        f"goal {goal}: unknown brokers {unknown} (the cluster has {cluster.broker_ids[:20]})"
                    )
            case ReplicationFactor(topic=t) if t not in topics:
                raise GoalError(f"goal {goal}: no topic {t!r} in the cluster")


def load_cluster(settings: PlanSettings, stderr: IO[str]) -> Cluster:
    def warn(message: str) -> None:
        print(f"reassignd feed plan: warning: {message}", file=stderr)

    if settings.cluster_file is not None:
        cluster = parse_cluster_file(_read(settings.cluster_file, "--cluster-file"), settings.cluster_file)
        if all(r is None for r in cluster.racks.values()):
            warn(f"{settings.cluster_file} gives no racks: placement cannot keep replicas on distinct racks")
    else:
        assert settings.bootstrap_controller is not None
        cluster = asyncio.run(_read_controller(settings, want_sizes=settings.sizes is None, warn=warn))
    if cluster.offline:
        warn(f"brokers {sorted(cluster.offline)} hold replicas but are not registered: they receive nothing")
    if settings.sizes is not None:
        doc = sizes_document(_read(settings.sizes, "--sizes"), settings.sizes)
        sizes = parse_log_dirs(doc, settings.sizes)
        cluster = with_dirs(cluster, *parse_dir_places(doc, settings.sizes))
        unsized = sum(1 for r in cluster.rows if (r[0], r[1]) not in sizes)
        if unsized:
            warn(
                f"{unsized} of {len(cluster.rows)} partitions have no size in {settings.sizes}: counted as 0 bytes"
            )
        cluster = with_sizes(cluster, sizes)
    elif settings.cluster_file is not None and not any(r[2] for r in cluster.rows):
        warn("no --sizes: every partition counts as 0 bytes (bytes goals have nothing to balance)")
    return cluster


async def _read_controller(settings: PlanSettings, *, want_sizes: bool, warn: Any) -> Cluster:
    from reassignd.feeder.controller_input import read_cluster  # noqa: PLC0415 (aiohttp only here)

    assert settings.bootstrap_controller is not None
    return await read_cluster(
        settings.bootstrap_controller,
        settings.auth_token,
        settings.request_timeout_s,
        want_sizes=want_sizes,
        warn=warn,
        tls=settings.tls,
    )


def write_outputs(
    result: PlanResult, settings: PlanSettings, now: datetime.datetime
) -> tuple[str, dict[str, Any]]:
    created_at = now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    document = batches_document(result, created_at, settings.batch_size)
    summary = summary_text(result, document)
    if not settings.dry_run:
        assert settings.out is not None
        out = Path(settings.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "plan.json").write_text(plan_file(result), encoding="utf-8")
        (out / "rollback.json").write_text(rollback_file(result), encoding="utf-8")
        (out / "batches.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        (out / "summary.txt").write_text(summary, encoding="utf-8")
        (out / "plan.svg").write_text(picture_file(result, document), encoding="utf-8")
    return summary, document


def run_plan_command(settings: PlanSettings, stdout: IO[str], stderr: IO[str]) -> int:
    try:
        cluster = load_cluster(settings, stderr)
        check_goals(settings.goals, cluster)
    except (InputError, GoalError) as e:
        print(f"reassignd feed plan: error: {e}", file=stderr)
        return 2
    except ClientError as e:
        print(f"reassignd feed plan: error: {e}", file=stderr)
        return 1
    from reassignd.feeder.spark_job import (  # noqa: PLC0415 (pyspark only when planning)
        SparkMissing,
        active_context,
        plan_on_spark,
        spark_context,
    )

    existing = active_context()  # a context this process already runs is used, not stopped
    try:
        context = existing or spark_context(settings.master)
    except SparkMissing as e:
        print(f"reassignd feed plan: error: {e}", file=stderr)
        return 1
    except Exception as e:  # a JVM that cannot start: one line, not a trace
        print(
            f"reassignd feed plan: error: cannot start Spark ({settings.master or 'local[*]'}): {e}".splitlines()[
                0
            ],
            file=stderr,
        )
        return 1
    try:
        result = plan_on_spark(context, cluster, settings.goals, settings.options, settings.tasks)
    except GoalError as e:
        print(f"reassignd feed plan: error: {e}", file=stderr)
        return 2
    except Exception as e:  # whatever Spark raised: one line, not a trace
        print(
            f"reassignd feed plan: error: the Spark job failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
            file=stderr,
        )
        return 1
    finally:
        if existing is None:
            context.stop()
    try:
        summary, _ = write_outputs(result, settings, datetime.datetime.now(datetime.UTC))
    except OSError as e:
        print(f"reassignd feed plan: error: cannot write to {settings.out}: {e.strerror or e}", file=stderr)
        return 1
    stdout.write(summary)
    return 0
