#!/usr/bin/env bash
# Prepare this checkout on a fresh Debian machine: Debian's ZooKeeper and a Java runtime (only if
# missing), a venv in .venv, and the package installed editable. Idempotent and non-interactive;
# installs with apt-get as root (or through sudo). Used by scripts/test.sh and scripts/demo.sh.
# The installers' output goes to a log file, printed (its last lines) only when a step fails.
#
# (no argument): everything scripts/test.sh runs: ZooKeeper, Java, Debian's Chromium (the status
# page's browser test; REASSIGND_NO_BROWSER=1 skips it), Debian's Prometheus (promtool and the
# server, for the tests of deploy/monitoring/), Node.js with KafkaJS (tests/kafkajs/), kcat, the package
# with its dev tools and the feeder extra (PySpark).
# --demo: only what the demo runs (scripts/demo.sh): ZooKeeper, Java, the package with the feeder
# extra; no Chromium, no dev tools. So that a first run starts the demo soon, the apt step runs
# beside the venv's install, and the feeder extra (PySpark, a large download) is installed in the
# background once the package is in: the demo's Spark step waits for it (.venv/.reassignd-feeder-install
# holds its process id and log while it is pending, .venv/.reassignd-feeder-rc its exit code).
# --unit: only what the unit loop needs (scripts/test.sh --unit): a venv with the package and its
# `test` and `lint` extras; no apt, no Java, no Spark, no Chromium.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode=all
case "${1:-}" in
"") ;;
--unit) mode=unit ;;
--demo) mode=demo ;;
*)
    echo "bootstrap: unknown option $1 (--unit or --demo, or nothing for everything)" >&2
    exit 2
    ;;
esac

log="$(mktemp "${TMPDIR:-/tmp}/reassignd-bootstrap.XXXXXX")"
# quietly WHAT COMMAND...: one line saying WHAT, COMMAND's output into the log; when it fails,
# the log's last lines and the step's exit code
quietly() {
    local what=$1
    shift
    echo "bootstrap: $what"
    "$@" >>"$log" 2>&1 </dev/null || {
        local rc=$?
        echo "bootstrap: failed: $what (exit $rc); the last lines of $log:" >&2
        tail -n 40 "$log" >&2
        exit "$rc"
    }
}

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
        quietly "apt-get update" "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
        apt_updated=1
    fi
    quietly "apt-get install $*" "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "$@"
}

# 1. ZooKeeper from Debian (reassignd.zk.server.LocalZooKeeper runs it for tests and the demo).
system_packages() {
    if [ ! -f /usr/share/java/zookeeper.jar ]; then
        apt_install zookeeper
    fi
    if ! command -v java >/dev/null 2>&1; then
        apt_install default-jre-headless
    fi
}
apt_pid=""
if [ "$mode" = demo ]; then
    system_packages &
    apt_pid=$!
elif [ "$mode" = all ]; then
    system_packages
fi
# the demo's apt step, when it runs beside the venv's install: waited for before another apt-get
# (dpkg takes one at a time) and before the bootstrap ends
wait_for_apt() {
    if [ -n "$apt_pid" ]; then
        local pid=$apt_pid
        apt_pid=""
        wait "$pid" || exit $?
        apt_updated=1
    fi
}

# Debian's Chromium for the status-page browser test (Playwright drives it by executable_path;
# no browser is ever downloaded): the tests only. Skipped with REASSIGND_NO_BROWSER=1 (the test
# then skips).
if [ "$mode" = all ] && [ "${REASSIGND_NO_BROWSER:-0}" != 1 ] && [ ! -x /usr/bin/chromium ]; then
    apt_install chromium
fi

# Debian's Prometheus (promtool and the server) for the tests of deploy/monitoring/: the tests
# only. They start servers of their own on free loopback ports; the package's postinst may also start
# its packaged service (port 9090) unless the machine forbids it (Docker images ship a
# /usr/sbin/policy-rc.d that does); either way the install succeeds and the tests do not use it.
if [ "$mode" = all ] && { ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; }; then
    apt_install prometheus
fi

# kcat (Debian's; librdkafka inside) for the listener's kcat test (tests/integration/test_kcat.py).
if [ "$mode" = all ] && ! command -v kcat >/dev/null 2>&1; then
    apt_install kcat
fi

# Node.js and npm (Debian's, only if missing) and KafkaJS, pinned in tests/kafkajs/package-lock.json,
# for the tests that drive KafkaJS (tests/integration/test_kafkajs.py): the tests only. `npm ci`
# again only when the lock file changed since the last install.
if [ "$mode" = all ]; then
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        apt_install nodejs npm
    fi
    kafkajs_stamp=tests/kafkajs/node_modules/.reassignd-installed
    kafkajs_sha="$(sha256sum tests/kafkajs/package-lock.json | cut -d' ' -f1)"
    if [ "$(cat "$kafkajs_stamp" 2>/dev/null || true)" != "$kafkajs_sha" ] ||
        [ ! -f tests/kafkajs/node_modules/kafkajs/package.json ]; then
        quietly "npm ci (KafkaJS, tests/kafkajs)" \
            npm ci --prefix tests/kafkajs --no-audit --no-fund --ignore-scripts
        echo "$kafkajs_sha" >"$kafkajs_stamp"
    fi
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
        if [ "$mode" = unit ]; then
            echo "bootstrap: $python has no venv module (Debian: apt-get install python3-venv)" >&2
            exit 1
        fi
        # Debian splits venv/ensurepip out of python3.
        wait_for_apt
        apt_install "python$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
    fi
    rm -rf .venv
    quietly "creating .venv with $python" "$python" -m venv .venv
fi

# 3. The package, editable: with the dev tools and the feeder extra (PySpark), or (--demo) the
# feeder extra only, or (--unit) the test and lint extras; skipped when pyproject.toml did not
# change since the same install or the full one (which serves every mode).
case "$mode" in
all) extras="dev,feeder" ;;
demo) extras="feeder" ;;
unit) extras="test,lint" ;;
esac
stamp=.venv/.reassignd-installed
sha="$(sha256sum pyproject.toml | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
feeder_rc=.venv/.reassignd-feeder-rc
feeder_pending=.venv/.reassignd-feeder-install
pip_install=(.venv/bin/python -m pip install --quiet --disable-pip-version-check --progress-bar off)
if [ "$have" != "$sha $extras" ] && [ "$have" != "$sha dev,feeder" ] ||
    ! .venv/bin/python -c 'import reassignd' 2>/dev/null; then
    if [ "$mode" = demo ]; then
        # the package first, then its feeder extra's requirements in the background (a session of
        # their own: Ctrl-C in the demo does not cut an install half-way)
        if [ "$have" != "$sha base" ] || ! .venv/bin/python -c 'import reassignd' 2>/dev/null; then
            quietly "pip install -e ." "${pip_install[@]}" -e .
            echo "$sha base" >"$stamp"
        fi
        mapfile -t feeder_requirements < <(.venv/bin/python -c \
            'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["feeder"]))')
        feeder_log="$(mktemp "${TMPDIR:-/tmp}/reassignd-feeder-install.XXXXXX")"
        rm -f "$feeder_rc"
        echo "bootstrap: pip install ${feeder_requirements[*]} (in the background, log $feeder_log; the demo's Spark step waits for it)"
        setsid bash -c '"${@:4}" >"$1" 2>&1 </dev/null; rc=$?
            [ "$rc" -ne 0 ] || echo "$3 feeder" >.venv/.reassignd-installed
            echo "$rc" >"$2.tmp" && mv "$2.tmp" "$2"' \
            feeder-install "$feeder_log" "$feeder_rc" "$sha" "${pip_install[@]}" "${feeder_requirements[@]}" &
        echo "$! $feeder_log" >"$feeder_pending"
    else
        quietly "pip install -e '.[$extras]'" "${pip_install[@]}" -e ".[$extras]"
        echo "$sha $extras" >"$stamp"
        rm -f "$feeder_pending"
    fi
else
    rm -f "$feeder_pending" # nothing pending: the demo does not wait
fi
wait_for_apt
rm -f "$log"
