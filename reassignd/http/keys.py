"""Typed keys for what the application and each request carry."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from reassignd.controller.settings import ControllerSettings
from reassignd.controller.snapshot import ControllerView
from reassignd.http.auth import Principal
from reassignd.http.batch_status_cache import BatchStatusCache

VIEW = web.AppKey[ControllerView]("view")
SETTINGS = web.AppKey("settings", ControllerSettings)
TOKENS = web.AppKey[Mapping[str, Principal] | None]("tokens")  # None: no tokens file (loopback only)
BATCH_STATUSES = web.AppKey("batch_statuses", BatchStatusCache)  # what /metrics shows of batches

PRINCIPAL = web.RequestKey("principal", Principal)  # set by the auth middleware
