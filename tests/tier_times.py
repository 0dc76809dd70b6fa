"""Where the suite's time goes: at the end of a run, one line per tier (the top-level directory
under ``tests/``: unit, integration, faults, feeder, browser) with its tests' summed durations
(setup, call and teardown; under pytest-xdist the sum over the workers, so more than the wall time).

With ``REASSIGND_TIER_TIMES=<file>`` in the environment, the tiers are also appended to that file
as ``<tier> <seconds> <tests>`` lines, from which ``scripts/test.sh`` prints its closing time line
over several pytest runs. Registered by ``tests/conftest.py``'s ``pytest_configure``."""

from __future__ import annotations

import os
import time

import pytest

TIER_TIMES_ENV = "REASSIGND_TIER_TIMES"


def tier_of(nodeid: str) -> str:
    """``tests/unit/test_x.py::test_y`` → ``unit``; a module directly under tests/ → ``tests``."""
    parts = nodeid.split("::", 1)[0].split("/")
    if len(parts) >= 3 and parts[0] == "tests":
        return parts[1]
    return "tests"


class TierTimes:
    """The plugin: sums each report's duration by tier; under xdist the controller receives every
    worker's reports through the same hook, and only the controller has a terminal summary."""

    def __init__(self) -> None:
        self.seconds_by_tier: dict[str, float] = {}
        self.tests_by_tier: dict[str, set[str]] = {}
        self.started_s = time.monotonic()

    def pytest_sessionstart(self) -> None:
        self.started_s = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        tier = tier_of(report.nodeid)
        self.seconds_by_tier[tier] = self.seconds_by_tier.get(tier, 0.0) + report.duration
        self.tests_by_tier.setdefault(tier, set()).add(report.nodeid)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.seconds_by_tier or os.environ.get("PYTEST_XDIST_WORKER"):
            return  # a worker's share is the controller's too: counted once, there
        wall_s = time.monotonic() - self.started_s
        tiers = sorted(self.seconds_by_tier)
        line = ", ".join(
            f"{t} {self.seconds_by_tier[t]:.1f}s ({len(self.tests_by_tier[t])} tests)" for t in tiers
        )
        terminalreporter.write_sep("=", "time per tier (summed test durations)")
        terminalreporter.write_line(f"{line}; wall {wall_s:.1f}s")
        path = os.environ.get(TIER_TIMES_ENV)
        if path:
            with open(path, "a", encoding="utf-8") as out:
                for t in tiers:
                    seconds = self.seconds_by_tier[t]
                    out.write(f"{t} {seconds:.3f} {len(self.tests_by_tier[t])}\n")
