"""Typed keys for what the application and each request carry."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from reassignd.agent_reports.fetch import SharedReports
from reassignd.agent_reports.status_cache import BatchStatusCache
from reassignd.controller.api.port import ControllerView
from reassignd.controller.settings import ControllerSettings
from reassignd.http.answers import AnswerCache, Parts
from reassignd.http.auth import Principal
from reassignd.stream.record_log import RecordLog

VIEW = web.AppKey[ControllerView]("view")
SETTINGS = web.AppKey("settings", ControllerSettings)
TOKENS = web.AppKey[Mapping[str, Principal] | None]("tokens")  # None: no tokens file (loopback only)
RECORDS = web.AppKey("records", RecordLog)  # this instance's stream records (GET /v1/events)
BATCH_STATUSES = web.AppKey("batch_statuses", BatchStatusCache)  # what /metrics shows of batches
ANSWERS = web.AppKey("answers", AnswerCache)  # read answers kept encoded per snapshot part
REASSIGNMENT_PARTS = web.AppKey("reassignment_parts", Parts)  # each one's JSON, kept per view
OPENAPI = web.AppKey[Mapping[str, object]]("openapi")  # the document GET /v1/openapi.json serves
REPORTS = web.AppKey("reports", SharedReports)  # agents' reports, one round shared by concurrent reads

PRINCIPAL = web.RequestKey("principal", Principal)  # set by the auth middleware
