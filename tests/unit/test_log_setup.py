"""``--log-format json``: one JSON object per line with ts, level, logger, msg."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from reassignd.log_setup import LogSettings, configure_logging


@pytest.fixture
def restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in handlers:
        root.addHandler(h)
    root.setLevel(level)


@pytest.mark.usefixtures("restore_root_logger")
def test_json_lines() -> None:
    out = io.StringIO()
    configure_logging(LogSettings("info", "json"), out)
    log = logging.getLogger("reassignd.test")
    log.info("listening on %s", "http://127.0.0.1:8080")
    log.debug("not shown at info")
    try:
        raise ValueError("bad\nthing")
    except ValueError:
        log.exception("it failed")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert set(first) == {"ts", "level", "logger", "msg"}
    assert (first["level"], first["logger"], first["msg"]) == (
        "info",
        "reassignd.test",
        "listening on http://127.0.0.1:8080",
    )
    assert first["ts"].endswith("Z")
    assert second["level"] == "error"
    assert "ValueError: bad\nthing" in second["exc"]


@pytest.mark.usefixtures("restore_root_logger")
def test_text_lines() -> None:
    out = io.StringIO()
    configure_logging(LogSettings("debug", "text"), out)
    logging.getLogger("reassignd.test").debug("hello %d", 3)
    assert out.getvalue().rstrip().endswith("DEBUG   reassignd.test: hello 3")
