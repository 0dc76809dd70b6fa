#!/usr/bin/env bash
# The demo on a fresh Debian machine: bootstrap (only what the demo runs: ZooKeeper, Java, the
# package with its feeder extra), then a local ZooKeeper, a controller and six broker agents on
# three racks, a demo topic, a broker drained with live byte-level progress and a move cancelled
# half-way. It stops by itself; Ctrl-C stops everything at any point.
# Arguments go to the demo (`bash scripts/demo.sh --help`, `--duration-s 30`); they are checked
# first, before anything is installed, as the `reassignd` command line checks its own.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The demo's options need only the standard library: any Python 3.11 checks them (exit 2 with one
# line for a mistyped flag, --help printed) before the install. Without one, the demo checks them.
for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
        "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" "$candidate" -m reassignd.demo.options "$@"
        for arg in "$@"; do
            case "$arg" in
            -h | --help) exit 0 ;;
            esac
        done
        break
    fi
done

bash scripts/bootstrap.sh --demo

# a first run's PySpark install may still be going on in the background: the Spark step waits for it
export REASSIGND_DEMO_FEEDER_INSTALL="$PWD/.venv/.reassignd-feeder-install"
exec .venv/bin/python -m reassignd.demo "$@"
