#!/usr/bin/env bash
# The demo on a fresh Debian machine: bootstrap, then a local ZooKeeper, a controller and six
# broker agents on three racks, a demo topic, a broker drained with live byte-level progress and a
# move cancelled half-way. It stops by itself; Ctrl-C stops everything at any point.
# Arguments go to the demo (`bash scripts/demo.sh --help`, `--duration-s 30`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/bootstrap.sh

exec .venv/bin/python -m reassignd.demo "$@"
