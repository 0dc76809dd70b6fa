"""The Spark job's input files, written for the feeder tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reassignd.feeder.model import CURRENT
from tests.feeder.conftest import kafka_cluster


def write_inputs(tmp_path: Path) -> tuple[Path, Path]:
    cluster = kafka_cluster(brokers=9, racks=3, topics=10, partitions=30)
    snapshot = {
        "brokers": [{"id": b, "rack": r} for b, r in cluster.racks.items()],
        "topics": [
            {
                "name": t,
                "partitions": [
                    {"partition": r[1], "replicas": list(r[CURRENT])} for r in cluster.rows if r[0] == t
                ],
            }
            for t in sorted({r[0] for r in cluster.rows})
        ],
    }
    dirs: dict[int, list[dict[str, Any]]] = {}
    for r in cluster.rows:
        for b in r[CURRENT]:
            dirs.setdefault(b, []).append(
                {"partition": f"{r[0]}-{r[1]}", "size": r[2], "offsetLag": 0, "isFuture": False}
            )
    log_dirs = {
        "version": 1,
        "brokers": [
            {"broker": b, "logDirs": [{"logDir": "/k", "error": None, "partitions": ps}]}
            for b, ps in dirs.items()
        ],
    }
    (tmp_path / "cluster.json").write_text(json.dumps(snapshot))
    (tmp_path / "sizes.txt").write_text(
        "Querying brokers for log directories information\n" + json.dumps(log_dirs) + "\n"
    )
    return tmp_path / "cluster.json", tmp_path / "sizes.txt"
