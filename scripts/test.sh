#!/usr/bin/env bash
# Everything CI checks, on a fresh Debian machine: bootstrap, then lint, format, types, tests.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/unit -x`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/bootstrap.sh

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
pytest "$@"
