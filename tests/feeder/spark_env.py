"""The flags of every JVM the feeder tests start: Spark's launcher (``spark-class`` runs one to
build each command line), a driver, a standalone master and worker, an executor. Each plan is a
few seconds of work after a start that loads thousands of classes, so the client compiler alone
and the serial collector: C2's compiler threads and a parallel collector's would compete for the
machine's cores with the rest of the suite (on the 2-core CI machine they about double a start's
CPU time). The classes of Spark's own jars are loaded without bytecode verification (the JDK's
are verified in its class-data archive already): a standalone master's start to ALIVE took
4.6–5.5 s of CPU instead of 5.7–7.1 s, alternated three times on the loaded CI machine. What a
plan computes does not depend on any of them."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

FAST_START_JVM = (
    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote"
)


def fast_jvm_env(base: Mapping[str, str], *spark_conf: str) -> dict[str, str]:
    """``base`` plus the variables Spark's scripts read: the launcher's, spark-submit's and the
    standalone daemons' JVM options; an executor's through the driver's configuration
    (``PYSPARK_SUBMIT_ARGS``, read when pyspark starts the driver), with ``spark_conf``
    (``key=value``) besides."""
    confs = (f"spark.executor.defaultJavaOptions={FAST_START_JVM}", *spark_conf)
    return {
        **base,
        "SPARK_LAUNCHER_OPTS": FAST_START_JVM,
        "SPARK_SUBMIT_OPTS": FAST_START_JVM,
        "SPARK_DAEMON_JAVA_OPTS": FAST_START_JVM,
        "PYSPARK_SUBMIT_ARGS": " ".join(f"--conf {shlex.quote(c)}" for c in confs) + " pyspark-shell",
    }


@contextmanager
def fast_jvm_environ() -> Iterator[None]:
    """This process's environment with :func:`fast_jvm_env`'s variables while pyspark starts a
    JVM in it (it reads them then); those are given back as they were afterwards (what pyspark
    set meanwhile, such as ``SPARK_HOME``, stays)."""
    added = fast_jvm_env({})
    saved = {k: os.environ.get(k) for k in added}
    os.environ.update(added)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
