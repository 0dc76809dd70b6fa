"""The status page's files and ``GET /v1/whoami``: public files with their types, nothing else
served from the package, the caller's role for the page's admin actions."""

from __future__ import annotations

import pytest

from reassignd.http.auth import Principal, Role
from reassignd.testing.fake_view import FakeView, call, serve

TOKENS = {"v": Principal("bob", Role.VIEWER), "a": Principal("alice", Role.ADMIN)}


@pytest.mark.parametrize(
    ("path", "content_type", "marker"),
    [
        ("/", "text/html", "<title>reassignd</title>"),
        ("/ui/app.js", "text/javascript", "/v1/events"),
        ("/ui/style.css", "text/css", ".bar"),
    ],
)
async def test_the_page_and_its_files_need_no_token(path: str, content_type: str, marker: str) -> None:
    async with serve(FakeView(), TOKENS) as c:
        resp = await c.get(path)
        assert resp.status == 200 and resp.content_type == content_type
        assert marker in await resp.text()
        assert resp.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "path", ["/ui/index.html", "/ui/../pyproject.toml", "/ui/%2e%2e/app.py", "/ui/", "/static/app.js"]
)
async def test_nothing_else_is_served(path: str) -> None:
    async with serve(FakeView(), TOKENS) as c:
        resp = await c.get(path)
        assert resp.status in (401, 404), path  # unknown paths need a token first, then are 404


async def test_the_page_loads_nothing_from_the_network() -> None:
    async with serve(FakeView()) as c:
        for path in ("/", "/ui/app.js", "/ui/style.css"):
            text = await (await c.get(path)).text()
            assert "http://" not in text and "https://" not in text, path


async def test_whoami_tells_the_role() -> None:
    async with serve(FakeView(), TOKENS) as c:
        await call(c, "GET", "/v1/whoami", 401)
        assert await call(c, "GET", "/v1/whoami", 200, headers={"Authorization": "Bearer v"}) == {
            "user": "bob",
            "role": "viewer",
        }
        assert (await call(c, "GET", "/v1/whoami", 200, headers={"Authorization": "Bearer a"}))[
            "role"
        ] == "admin"
    async with serve(FakeView()) as c:  # no tokens file (loopback): everyone is the anonymous admin
        assert await call(c, "GET", "/v1/whoami", 200) == {"user": "ANONYMOUS", "role": "admin"}
