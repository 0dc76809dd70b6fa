"""The controller's HTTP API as ``reassignd admin`` calls it.

One aiohttp session per run. The bootstrap URL may name any controller instance: its
``GET /v1/status`` names the active one, which every later request goes to. A write that still
lands on a standby (a failover in between) answers 503 NOT_CONTROLLER with the new active
controller's URL; the request is sent there once (a refused request changed nothing).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from reassignd.errors import error_name

CLIENT_ID = "reassignd-admin"
NOT_CONTROLLER = 41

Query = Sequence[tuple[str, str]]


class AdminError(Exception):
    """A failure of the run, reported as one line (exit 1)."""


class ApiError(AdminError):
    """The controller answered with an error object."""

    def __init__(self, message: str, *, status: int, error_code: int | None) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code


def _active_url(doc: Any) -> str | None:
    active = doc.get("active_controller") if isinstance(doc, dict) else None
    url = active.get("http") if isinstance(active, dict) else None
    return url.rstrip("/") if isinstance(url, str) and url else None


def _error(method: str, path: str, status: int, doc: Any) -> ApiError:
    code = doc.get("error_code") if isinstance(doc, dict) else None
    if not isinstance(code, int) or isinstance(code, bool):
        return ApiError(f"{method} {path}: HTTP {status}", status=status, error_code=None)
    name = doc.get("error_name") or error_name(code)
    message = doc.get("error_message")
    text = f"{method} {path}: HTTP {status} {name} ({code})" + (f": {message}" if message else "")
    if status == 401:
        text += " (give a token with --auth-token or REASSIGND_AUTH_TOKEN)"
    return ApiError(text, status=status, error_code=code)


class ControllerApi:
    def __init__(self, session: aiohttp.ClientSession, base_url: str, timeout_s: float) -> None:
        self.session = session
        self.base_url = base_url
        self.timeout_s = timeout_s

    @classmethod
    @asynccontextmanager
    async def open(cls, bootstrap: str, token: str | None, timeout_s: float) -> AsyncIterator[ControllerApi]:
        """A client of the active controller, found from ``bootstrap``."""
        headers = {"X-Client-Id": CLIENT_ID}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        async with aiohttp.ClientSession(
            headers=headers, timeout=aiohttp.ClientTimeout(total=timeout_s)
        ) as session:
            api = cls(session, bootstrap, timeout_s)
            await api.find_active()
            yield api

    async def find_active(self) -> None:
        status = await self.get("/v1/status")
        if isinstance(status, dict) and status.get("active") is True:
            return
        active = _active_url(status)
        if active is None:
            raise AdminError(f"{self.base_url} is a standby controller and knows no active controller")
        self.base_url = active

    async def get(self, path: str, query: Query = ()) -> Any:
        return await self.request("GET", path, query=query)

    async def post(self, path: str, body: Any) -> Any:
        return await self.request("POST", path, body=body)

    async def delete(self, path: str) -> Any:
        return await self.request("DELETE", path)

    async def request(self, method: str, path: str, *, query: Query = (), body: Any = None) -> Any:
        """The decoded JSON of a 200 answer; :class:`ApiError` for any other."""
        status, doc = await self._send(method, path, query, body)
        if status == 503 and isinstance(doc, dict) and doc.get("error_code") == NOT_CONTROLLER:
            active = _active_url(doc)
            if active is not None and active != self.base_url:
                self.base_url = active
                status, doc = await self._send(method, path, query, body)
        if status != 200:
            raise _error(method, path, status, doc)
        return doc

    async def _send(self, method: str, path: str, query: Query, body: Any) -> tuple[int, Any]:
        url = self.base_url + path
        try:
            async with self.session.request(
                method, url, params=list(query) or None, json=body if method == "POST" else None
            ) as resp:
                status, text = resp.status, await resp.text()
        except TimeoutError:
            raise AdminError(f"{method} {url}: no answer within {self.timeout_s:g} s") from None
        except (aiohttp.ClientError, OSError) as e:
            raise AdminError(f"cannot reach the controller at {self.base_url}: {e}") from None
        try:
            return status, json.loads(text)
        except ValueError:
            if status == 200:
                raise AdminError(f"{method} {url}: the answer is not JSON") from None
            return status, None
