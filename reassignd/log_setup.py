"""Process-wide logging: ``--log-level`` and ``--log-format text|json``, to stderr.

JSON: one object per line with ``ts`` (UTC, ISO 8601, milliseconds), ``level``, ``logger``,
``msg`` — plus ``exc`` with the traceback when there is one. An audit line (the
``reassignd.audit`` logger, :mod:`reassignd.stream.audit`) carries its entry as an object under
``audit``, its ``msg`` being just ``"audit"``; in text format the message is the entry's JSON.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TextIO

from reassignd.options import choice, option

LogFormat = Literal["text", "json"]
LEVELS = ("debug", "info", "warning", "error", "critical")
TEXT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


@dataclass(frozen=True, slots=True)
class LogSettings:
    level: str = option(  # one of LEVELS
        "info",
        parse=choice(*LEVELS),
        help="log level: " + ", ".join(LEVELS),
        metavar="LEVEL",
        flag="log-level",
    )
    format: LogFormat = option(
        "text",
        parse=choice("text", "json"),
        help="log line format: text or json",
        metavar="FORMAT",
        flag="log-format",
    )


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        audit = getattr(record, "audit", None)
        if isinstance(audit, dict):
            entry["msg"], entry["audit"] = "audit", audit
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exc"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def make_formatter(fmt: LogFormat) -> logging.Formatter:
    if fmt == "json":
        return JsonFormatter()
    return logging.Formatter(TEXT_FORMAT)


def configure_logging(settings: LogSettings, stream: TextIO | None = None) -> None:
    """Replace the root logger's handlers with one stream handler in the chosen format."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(make_formatter(settings.format))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.level.upper())
    # aiohttp logs every request at INFO on "aiohttp.access": shown with --log-level debug only.
    access_level = logging.INFO if root.level <= logging.DEBUG else logging.WARNING
    logging.getLogger("aiohttp.access").setLevel(access_level)
