#!/usr/bin/env bash
# Prepare this checkout on a fresh Debian machine: Debian's ZooKeeper (only if missing), a venv in
# .venv, and the package with its dev tools installed editable. Idempotent and non-interactive;
# installs with apt-get as root (or through sudo). Used by scripts/test.sh and scripts/demo.sh.
#
# --unit: only what the unit loop needs (scripts/test.sh --unit): a venv with the package and its
# `test` and `lint` extras; no apt, no Java, no Spark, no Chromium.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

unit=0
if [ "${1:-}" = "--unit" ]; then
    unit=1
fi

apt_updated=0
apt_install() {
    local as_root=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            as_root=(sudo -n)
        else
            echo "bootstrap: need root (or sudo) to apt-get install $*" >&2
            exit 1
        fi
    fi
    if [ "$apt_updated" -eq 0 ]; then
        "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
        apt_updated=1
    fi
    echo "bootstrap: apt-get install $*"
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "$@" </dev/null
}

# 1. ZooKeeper from Debian (reassignd.zk.server.LocalZooKeeper runs it for tests and the demo).
if [ "$unit" -eq 0 ] && [ ! -f /usr/share/java/zookeeper.jar ]; then
    apt_install zookeeper
fi
if [ "$unit" -eq 0 ] && ! command -v java >/dev/null 2>&1; then
    apt_install default-jre-headless
fi

# Debian's Chromium for the status-page browser test (Playwright drives it by executable_path;
# no browser is ever downloaded). Skipped with REASSIGND_NO_BROWSER=1 (the test then skips).
if [ "$unit" -eq 0 ] && [ "${REASSIGND_NO_BROWSER:-0}" != 1 ] && [ ! -x /usr/bin/chromium ]; then
    apt_install chromium
fi

# 2. A Python >= 3.11 and a venv in .venv.
python=${PYTHON:-}
if [ -z "$python" ]; then
    for candidate in python3.11 python3 python; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            python=$candidate
            break
        fi
    done
fi
if [ -z "$python" ]; then
    echo "bootstrap: needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)" >&2
    exit 1
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
        if [ "$unit" -eq 1 ]; then
            echo "bootstrap: $python has no venv module (Debian: apt-get install python3-venv)" >&2
            exit 1
        fi
        # Debian splits venv/ensurepip out of python3.
        apt_install "python$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
    fi
    rm -rf .venv
    echo "bootstrap: creating .venv with $python"
    "$python" -m venv .venv
fi

# 3. The package, editable, with the dev tools and the feeder extra (PySpark), or (--unit) with the
# test and lint extras; skipped when pyproject.toml did not change since the same install or a
# larger one (the full install serves the unit loop too).
extras="dev,feeder"
if [ "$unit" -eq 1 ]; then
    extras="test,lint"
fi
stamp=.venv/.reassignd-installed
sha="$(sha256sum pyproject.toml | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$have" != "$sha $extras" ] && [ "$have" != "$sha dev,feeder" ] ||
    ! .venv/bin/python -c 'import reassignd' 2>/dev/null; then
    echo "bootstrap: pip install -e '.[$extras]'"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --progress-bar off -e ".[$extras]"
    echo "$sha $extras" >"$stamp"
fi
