"""The controller's HTTP API (aiohttp): routes, error mapping, auth, metrics.

Imported as ``reassignd.http`` — never as a top-level ``http``, which would shadow the standard
library module aiohttp itself imports.
"""

from __future__ import annotations

from reassignd.http.app import build_app
from reassignd.http.server import HttpServer

__all__ = ["HttpServer", "build_app"]
