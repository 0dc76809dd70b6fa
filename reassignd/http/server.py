"""Start and stop the HTTP API on ``host:port``; one ``listening on <url>`` log line."""

from __future__ import annotations

import logging
import ssl

from aiohttp import web

log = logging.getLogger(__name__)


def http_url(host: str, port: int, *, tls: bool = False) -> str:
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # IPv6 literal
    return f"{'https' if tls else 'http'}://{host}:{port}"


class HttpServer:
    """``url = await server.start()`` … ``await server.stop()``; port 0 binds a free port and
    ``url`` carries the real one. With ``ssl_context`` it serves HTTPS (``url`` is https://)."""

    def __init__(
        self,
        app: web.Application,
        host: str,
        port: int,
        *,
        shutdown_timeout_s: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.url: str | None = None
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=shutdown_timeout_s)
        self._running = False

    async def start(self) -> str:
        await self._runner.setup()
        self._running = True
        try:
            site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.ssl_context)
            await site.start()
        except BaseException:
            await self.stop()
            raise
        port = self.port
        addresses = self._runner.addresses
        if addresses:
            port = int(addresses[0][1])
        self.url = http_url(self.host, port, tls=self.ssl_context is not None)
        log.info("listening on %s", self.url)
        return self.url

    async def stop(self) -> None:
        """Stop accepting, let in-flight requests finish (bounded), close. Idempotent."""
        if self._running:
            self._running = False
            await self._runner.cleanup()
