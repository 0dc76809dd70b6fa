"""What a process start loads: every CLI, agent and controller process of the suite (and of an
operator's shell) pays its imports. A command line does not load the HTTP API and aiohttp's
server (it reads the tokens file through ``reassignd.http.auth`` alone); a controller loads the
Kafka listener (kafka-python's client) and the event stream's sender (aiokafka) only when they are
configured."""

from __future__ import annotations

import subprocess
import sys


def _loaded(module: str, watched: tuple[str, ...]) -> list[str]:
    code = f"import sys, {module}\nprint(' '.join(m for m in {watched!r} if m in sys.modules))\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120
    )
    return proc.stdout.split()


def test_the_command_line_does_not_load_the_http_api() -> None:
    watched = (
        "reassignd.http.app",
        "reassignd.http.server",
        "aiohttp.web",
        "reassignd.controller.runtime.controller",
    )
    assert _loaded("reassignd.cli", watched) == []


def test_a_controller_loads_the_kafka_clients_only_when_configured() -> None:
    watched = ("kafka", "aiokafka", "reassignd.kafka_listener.server", "reassignd.stream.kafka_sink")
    assert _loaded("reassignd.service", watched) == []
    # and the composition reaches both when asked for (their imports resolve)
    assert {"kafka", "reassignd.kafka_listener.server"} <= set(
        _loaded("reassignd.kafka_listener.server", watched)
    )
