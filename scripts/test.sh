#!/usr/bin/env bash
# Everything CI checks, on a fresh Debian machine: bootstrap, then lint, format, types, tests.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/unit -x`).
#
# --unit: the fast developer loop: the same checks, and the tests that need nothing beyond Python
# (no ZooKeeper, Spark, Chromium or fault suite: `-m "not zookeeper and not spark and not browser
# and not faults"`); its bootstrap installs no apt package, no Java, no Spark, no Chromium.
#
# REASSIGND_TEST_WORKERS=N runs the pure tests in N pytest-xdist workers (see below).
# At the end (also when a step fails) it prints where the time went: pytest's 25 slowest tests,
# then one line with each step's wall time and each test tier's summed test durations
# (tests/tier_times.py writes those to $REASSIGND_TIER_TIMES).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

unit=()
if [ "${1:-}" = "--unit" ]; then
    shift
    unit=(--unit)
fi

steps=()
tiers_file="$(mktemp)"
export REASSIGND_TIER_TIMES="$tiers_file"
# step NAME COMMAND...: runs COMMAND and records its wall time under NAME
step() {
    local name=$1 started=$SECONDS
    shift
    "$@" || {
        local rc=$?
        steps+=("$name $((SECONDS - started))s (failed)")
        return "$rc"
    }
    steps+=("$name $((SECONDS - started))s")
}
report() {
    local tiers
    # several pytest runs may report the same tier: add them up
    tiers="$(awk '{s[$1] += $2; n[$1] += $3} END {for (t in s) printf "%s %.0fs (%d tests)\n", t, s[t], n[t]}' "$tiers_file" | sort | paste -sd, - | sed 's/,/, /g')"
    rm -f "$tiers_file"
    printf '== time: '
    printf '%s, ' "${steps[@]}"
    echo "total ${SECONDS}s"
    if [ -n "$tiers" ]; then
        echo "== time per test tier (summed test durations): $tiers"
    fi
}
trap report EXIT

step bootstrap bash scripts/bootstrap.sh "${unit[@]}"

export PATH="$PWD/.venv/bin:$PATH"
echo "== ruff check"
step lint ruff check .
echo "== ruff format --check"
step format ruff format --check .
echo "== mypy (strict, on the package and the tests)"
step types mypy
echo "== lint-imports (the layer rules in pyproject.toml)"
step layers lint-imports --no-cache
# REASSIGND_TEST_WORKERS=N (opt-in, until repeated runs prove it): the pure tests in N
# pytest-xdist workers, the tiers that run processes, ZooKeeper, Spark or a browser serially after
workers=()
if [ "${REASSIGND_TEST_WORKERS:-0}" != 0 ]; then
    workers=(-n "$REASSIGND_TEST_WORKERS")
fi
if [ "${#unit[@]}" -gt 0 ]; then
    echo "== pytest ${workers[*]} (the tests that need nothing beyond Python)"
    step pytest pytest "${workers[@]}" --durations=25 \
        -m "not zookeeper and not spark and not browser and not faults" "$@"
elif [ "$#" -gt 0 ] || [ "${#workers[@]}" -eq 0 ]; then
    echo "== pytest $*"
    step pytest pytest --durations=25 "$@"
else
    # both runs go ahead whatever the first's outcome, so one CI run shows every failure
    failed=0
    echo "== pytest ${workers[*]} tests/unit"
    step "pytest-unit" pytest "${workers[@]}" --durations=25 tests/unit || failed=1
    echo "== pytest (integration, faults, feeder, browser)"
    step "pytest-rest" pytest --durations=25 --ignore=tests/unit || failed=1
    exit "$failed"
fi
