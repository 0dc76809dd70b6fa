"""The controller's HTTP API (aiohttp): routes, error mapping, auth, metrics.

Imported as ``reassignd.http`` — never as a top-level ``http``, which would shadow the standard
library module aiohttp itself imports.

:func:`build_app` and :class:`HttpServer` are loaded when first asked for: a command that only
needs a request parser of this package (``reassignd admin batch``'s batch file, and every command
line, which imports the parsers of all commands) does not load the whole API and aiohttp's server
with it (about half of such a process's start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reassignd.http.app import build_app
    from reassignd.http.server import HttpServer

__all__ = ["HttpServer", "build_app"]

_LAZY = {"build_app": "reassignd.http.app", "HttpServer": "reassignd.http.server"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
