#!/usr/bin/env bash
# The demo on a fresh Debian machine: bootstrap, then a local ZooKeeper, a controller and three
# broker agents, a demo topic, and the cluster state printed live. Ctrl-C stops everything.
# Arguments go to the demo (`bash scripts/demo.sh --help`, `--duration-s 30`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/bootstrap.sh

exec .venv/bin/python -m reassignd.demo "$@"
