#!/usr/bin/env bash
# Everything CI checks, on a fresh Debian machine: bootstrap, then lint, format, types, tests.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/unit -x`).
#
# --unit: the fast developer loop: the same checks, and the tests that need nothing beyond Python
# (no ZooKeeper, Spark, Chromium or fault suite: `-m "not zookeeper and not spark and not browser
# and not faults"`); its bootstrap installs no apt package, no Java, no Spark, no Chromium.
#
# The tests run in pytest-xdist workers (see below; REASSIGND_TEST_WORKERS=0: serially).
# At the end (also when a step fails) it prints where the time went: pytest's 25 slowest tests,
# then one line with each step's wall time and each test tier's summed test durations
# (tests/tier_times.py writes those to $REASSIGND_TIER_TIMES).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

unit=()
collect=(tests)
if [ "${1:-}" = "--unit" ]; then
    shift
    unit=(--unit)
    # every test under tests/integration, tests/faults and tests/browser is marked zookeeper,
    # faults or browser (tests/conftest.py): the unit loop's tests are all in these two
    collect=(tests/unit tests/feeder)
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
# background NAME COMMAND...: starts COMMAND beside what follows, its output kept for
# background_done NAME (a step that fails or ends the command stops it, unreported)
declare -A bg_pid=() bg_out=()
background() {
    local name=$1 started=$SECONDS out
    shift
    out="$(mktemp)"
    (
        rc=0
        "$@" > "$out" 2>&1 || rc=$?
        echo "$rc $((SECONDS - started))" > "$out.rc"
    ) &
    bg_pid[$name]=$!
    bg_out[$name]=$out
}
# background_done NAME TITLE WHERE: waits for NAME, prints its output under "== TITLE", records
# its step as "NAME …s (WHERE)"; returns its status
background_done() {
    local name=$1 title=$2 where=$3 out=${bg_out[$1]} rc took
    wait "${bg_pid[$name]}" || true
    unset "bg_pid[$name]"
    echo "== $title"
    cat "$out"
    read -r rc took < "$out.rc"
    rm -f "$out" "$out.rc"
    if [ "$rc" = 0 ]; then
        steps+=("$name ${took}s ($where)")
    else
        steps+=("$name ${took}s ($where, failed)")
    fi
    return "$rc"
}
report() {
    local tiers pid
    for pid in "${bg_pid[@]}"; do  # still running: the command stopped before their end
        if kill -0 "$pid" 2> /dev/null; then
            pkill -P "$pid" 2> /dev/null || true
            kill "$pid" 2> /dev/null || true
        fi
    done
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
# Byte-code caches on, whatever the machine's default: with PYTHONDONTWRITEBYTECODE set (some CI
# images set it) every pytest worker and every controller, agent and CLI process a test starts
# compiles the package from source again (about 1.3 CPU-s a process start here), and pytest's
# rewritten test modules are never cached. Compiled once up front, so the workers do not race.
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 0 reassignd tests scripts bench > /dev/null || true
# mypy (one process, one core, 30-45 s from a clean clone) runs in the background from here, beside
# the warm-ups, the lint and the first pytest run, which leave a core idle or share both; its
# output and outcome are reported after that run (types_done), and a failure fails the command
echo "== mypy (strict, on the package and the tests): started in the background"
background types mypy
types_done() {  # waits for mypy, prints its output, records its step; returns its status
    background_done types "mypy (strict, on the package and the tests)" "beside the tests"
}
# Hypothesis builds its Unicode tables (about 2 CPU-s) in each worker that first draws text,
# unless .hypothesis/unicode_data holds them: built once here, by drawing some text
python -c "
from hypothesis import given, settings, strategies as st
given(st.text())(settings(max_examples=1, database=None)(lambda s: None))()
" 2> /dev/null || true
# pytest rewrites the test modules' asserts and caches them beside compileall's byte code: once
# here, in one process, instead of in each worker at once (about 3.6 CPU-s a worker)
pytest --collect-only -q "${collect[@]}" > /dev/null 2>&1 || true
echo "== ruff check"
step lint ruff check .
echo "== ruff format --check"
step format ruff format --check .
echo "== lint-imports (the layer rules in pyproject.toml)"
step layers lint-imports --no-cache
# Parallel workers (pytest-xdist), in runs that go ahead whatever the first's outcome, so one CI
# run shows every failure. First the unit, integration and browser tests together, three workers
# a core: the unit tests are CPU-bound, the integration tests wait on processes, ZooKeeper and
# JVMs, and each fills what the other leaves idle (on 2 cores, apart in 2 and 4 workers: 336 s;
# together in 4 workers: 322 s, 74 % busy; in 6: 282 s, 89 %; in 8: 320 s, more CPU for the same
# work). Then the fault suite (its tests mostly watch a window of time pass: one more than the
# cores) and, beside it in one process of its own, the feeder tests (CPU for Spark's JVMs, no
# window to watch: they fill what the fault suite leaves idle, with one Spark session instead of
# one per worker; with a fourth fault worker the faults took 172 s instead of 192 and the feeder
# beside them 194 instead of 167: the same phase). REASSIGND_TEST_WORKERS=N sets every run's
# workers (0: serially, in one process).
cores="$(nproc 2>/dev/null || echo 2)"
cores=$((cores > 4 ? 4 : cores))  # past a few workers ZooKeeper and the JVMs' start-up dominate
workers_for() {  # workers_for DEFAULT: pytest's -n arguments
    local n=${REASSIGND_TEST_WORKERS:-$1}
    if [ "$n" != 0 ]; then
        # worksteal: tests handed out as workers free up, a busy worker's queue shared out. (Not
        # loadgroup: pytest-xdist 3.8's groups do nothing under pytest 9, whose node ids it cannot
        # rename; the Spark session is one per worker instead: tests/feeder/conftest.py)
        echo "-n $n --dist worksteal"
    fi
}
if [ "${#unit[@]}" -gt 0 ]; then
    echo "== pytest (the tests that need nothing beyond Python)"
    failed=0
    if [ "$#" -gt 0 ]; then
        collect=("$@")  # the caller's paths and options instead
    fi
    # shellcheck disable=SC2046
    step pytest pytest $(workers_for "$cores") --durations=25 \
        -m "not zookeeper and not spark and not browser and not faults" "${collect[@]}" || failed=1
    types_done || failed=1
    exit "$failed"
elif [ "$#" -gt 0 ]; then
    echo "== pytest $*"
    failed=0
    step pytest pytest --durations=25 "$@" || failed=1
    types_done || failed=1
    exit "$failed"
else
    failed=0
    echo "== pytest (unit, integration, browser)"
    # shellcheck disable=SC2046
    step "pytest-unit-integration" pytest $(workers_for $((cores * 3))) --durations=25 \
        --ignore=tests/faults --ignore=tests/feeder || failed=1
    types_done || failed=1
    echo "== pytest tests/feeder: started in the background, beside the fault suite"
    background pytest-feeder pytest -n 0 --durations=10 tests/feeder
    echo "== pytest tests/faults"
    # shellcheck disable=SC2046
    step "pytest-faults" pytest $(workers_for $((cores + 1))) --durations=25 tests/faults || failed=1
    background_done pytest-feeder "pytest tests/feeder (ran beside the fault suite)" "beside the faults" || failed=1
    exit "$failed"
fi
