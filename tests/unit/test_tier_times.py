"""The time-per-tier line's grouping (tests/tier_times.py): a test's tier is its top-level
directory under tests/."""

from __future__ import annotations

import pytest

from tests.tier_times import tier_of


@pytest.mark.parametrize(
    ("nodeid", "tier"),
    [
        ("tests/unit/zk/test_codec.py::test_round_trip", "unit"),
        ("tests/integration/test_controller.py::test_one[a/b]", "integration"),
        ("tests/faults/test_zookeeper.py::test_x", "faults"),
        ("tests/feeder/test_planner.py", "feeder"),
        ("tests/test_top.py::test_x", "tests"),
    ],
)
def test_a_tests_tier_is_its_top_level_directory(nodeid: str, tier: str) -> None:
    assert tier_of(nodeid) == tier
