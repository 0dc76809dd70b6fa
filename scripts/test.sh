#!/usr/bin/env bash
# Everything CI checks, on a fresh Debian machine: bootstrap, then lint, format, types, tests.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/unit -x`).
#
# --unit: the fast developer loop: the same checks, and the tests that need nothing beyond Python
# (no ZooKeeper, Spark, Chromium or fault suite: `-m "not zookeeper and not spark and not browser
# and not faults"`); its bootstrap installs no apt package, no Java, no Spark, no Chromium.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

unit=()
if [ "${1:-}" = "--unit" ]; then
    shift
    unit=(--unit)
fi
bash scripts/bootstrap.sh "${unit[@]}"

export PATH="$PWD/.venv/bin:$PATH"
echo "== ruff check"
ruff check .
echo "== ruff format --check"
ruff format --check .
echo "== mypy (strict, on the package and the tests)"
mypy
echo "== lint-imports (the layer rules in pyproject.toml)"
lint-imports --no-cache
echo "== pytest"
if [ "${#unit[@]}" -gt 0 ]; then
    pytest -m "not zookeeper and not spark and not browser and not faults" "$@"
else
    pytest "$@"
fi
