"""``scripts/container-smoke.sh`` run here, where no container engine runs: ``DOCKER`` names a
stand-in that runs what a container would run as a local process (``reassignd ...`` for the
controller image, ``reassignd feed ...`` for the feeder image, on loopback like ``--network
host``) and answers the script's few other questions (``image inspect``, ``inspect``, ``stop``,
``rm``). What is checked is the script itself: its ZooKeeper, the controller and the agents
started from the controller image, the topic, the feeder image's plan against the controller,
the clean stop with exit codes 0, and that it accepts both image names. The images' own contents
(Java or not) are what the stand-in says they are; the Dockerfiles are checked by
``tests/unit/test_deploy_manifests.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.feeder.spark_env import fast_jvm_env

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.timeout(300), pytest.mark.spark]  # the feeder image's plan runs Spark

STAND_IN = r'''#!PYTHON
"""A stand-in for `docker` with the subcommands scripts/container-smoke.sh uses. A detached
"container" is a waiter process that starts the command, writes its pid (NAME.pid) and, once it
exits, its exit code (NAME.exit), as the engine would keep them."""
import json, os, signal, subprocess, sys, time
from pathlib import Path

STATE = Path(os.environ["SMOKE_STATE"])
CONTROLLER, FEEDER = os.environ["SMOKE_CONTROLLER_IMAGE"], os.environ["SMOKE_FEEDER_IMAGE"]
REASSIGND = [sys.executable, "-m", "reassignd"]
WAITER = (
    "import subprocess, sys; from pathlib import Path; base = sys.argv[1]; "
    "p = subprocess.Popen(sys.argv[2:]); Path(base + '.pid').write_text(str(p.pid)); "
    "Path(base + '.exit').write_text(str(p.wait()))"
)


def command(image, entrypoint, args):
    if entrypoint == "sh":  # what the images hold: Java in the feeder image only
        return ["sh", "-c", "exit 0" if image == FEEDER else "exit 1"]
    if entrypoint == "java":
        return ["java", *args]
    if image == FEEDER:
        return [*REASSIGND, "feed", *args]
    assert image == CONTROLLER, image
    return [*REASSIGND, *args]


def run(argv):
    detach, name, entrypoint, env = False, None, None, dict(os.environ)
    while argv[0].startswith("-"):
        flag = argv.pop(0)
        if flag == "-d":
            detach = True
        elif flag == "--name":
            name = argv.pop(0)
        elif flag == "--network":
            assert argv.pop(0) == "host"
        elif flag == "--entrypoint":
            entrypoint = argv.pop(0)
        elif flag == "-e":
            key, _, value = argv.pop(0).partition("=")
            env[key] = value
        elif flag != "--rm":
            raise SystemExit(f"stand-in: unknown flag {flag}")
    cmd = command(argv[0], entrypoint, argv[1:])
    if not detach:
        return subprocess.run(cmd, env=env).returncode
    base = str(STATE / name)
    with open(base + ".log", "wb") as log:
        subprocess.Popen([sys.executable, "-c", WAITER, base, *cmd], env=env, stdout=log,
                         stderr=subprocess.STDOUT, start_new_session=True)
    while not Path(base + ".pid").exists():
        time.sleep(0.05)
    print(name)
    return 0


def main(argv):
    verb = argv.pop(0)
    if verb == "image" and argv[0] == "inspect":
        return 0 if argv[1] in (CONTROLLER, FEEDER) else 1
    if verb == "run":
        return run(argv)
    names = [a for a in argv if not a.startswith("-") and not a.isdigit() and "{{" not in a]
    if verb == "stop":
        for name in names:
            os.kill(int((STATE / f"{name}.pid").read_text()), signal.SIGTERM)
        for name in names:
            deadline = time.monotonic() + 30
            while not (STATE / f"{name}.exit").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
        return 0
    if verb == "inspect":
        for name in names:
            print((STATE / f"{name}.exit").read_text().strip())
        return 0
    if verb == "rm":
        for name in names:
            pid = STATE / f"{name}.pid"
            if pid.exists() and not (STATE / f"{name}.exit").exists():
                os.kill(int(pid.read_text()), signal.SIGKILL)
        return 0
    raise SystemExit(f"stand-in: unknown command {verb}")


sys.exit(main(sys.argv[1:]))
'''


def test_the_smoke_script_runs_both_images(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    state = tmp_path / "state"
    state.mkdir()
    docker = tmp_path / "docker"
    docker.write_text(_stand_in())
    docker.chmod(0o755)
    # the feeder's Spark starts its JVMs with the suite's start-up flags (tests/feeder/spark_env.py:
    # what a plan computes does not depend on them)
    env = fast_jvm_env(
        {
            "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "DOCKER": str(docker),
            "SMOKE_STATE": str(state),
            "SMOKE_CONTROLLER_IMAGE": "registry.example/reassignd:0.1.0",
            "SMOKE_FEEDER_IMAGE": "registry.example/reassignd-feeder:0.1.0",
        }
    )
    done = subprocess.run(
        [
            "bash",
            str(ROOT / "scripts" / "container-smoke.sh"),
            env["SMOKE_CONTROLLER_IMAGE"],
            env["SMOKE_FEEDER_IMAGE"],
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in state.glob("*.log"))
    assert done.returncode == 0, done.stdout + done.stderr + logs
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("container-smoke: ok; registry.example/reassignd:0.1.0 without Java")
    assert "registry.example/reassignd-feeder:0.1.0 planned: plan " in last


def _stand_in() -> str:
    return STAND_IN.replace("#!PYTHON", f"#!{sys.executable}", 1)
