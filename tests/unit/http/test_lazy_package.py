"""``reassignd.http`` loads its API (``build_app``, ``HttpServer``) when first asked for: a command
line that needs one of its request parsers only starts about twice as fast (every CLI, agent and
cluster process of the suite does)."""

from __future__ import annotations

import subprocess
import sys

import reassignd.http
from reassignd.http.app import build_app
from reassignd.http.server import HttpServer


def test_the_command_line_does_not_load_the_http_api() -> None:
    code = (
        "import sys, reassignd.cli\n"
        "loaded = [m for m in ('reassignd.http.app', 'reassignd.http.server', 'aiohttp.web') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


def test_the_package_still_gives_its_api() -> None:
    assert reassignd.http.build_app is build_app
    assert reassignd.http.HttpServer is HttpServer
    assert sorted(reassignd.http.__all__) == ["HttpServer", "build_app"]


def test_a_name_the_package_does_not_have_is_an_attribute_error() -> None:
    try:
        reassignd.http.nothing_here  # noqa: B018
    except AttributeError as e:
        assert "nothing_here" in str(e)
    else:
        raise AssertionError("no AttributeError")
