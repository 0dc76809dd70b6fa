"""Start and stop the HTTP API on ``host:port``; one ``listening on <url>`` log line. A request
aiohttp cannot parse (a request line or header over 8 KiB, a NUL in a header) is the client's
error: answered 400 in the uniform error object (error 42, as every other refusal; aiohttp's own
answer would be text/plain) and logged as one INFO line, not an ERROR with a traceback."""

from __future__ import annotations

import logging
import ssl

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from reassignd.http.responses import INVALID_REQUEST, UNKNOWN_SERVER_ERROR, error_response

log = logging.getLogger(__name__)


class _MalformedRequestIsNoError(logging.Filter):
    """aiohttp's "Error handling request" for a request it could not parse (answered 400): one
    INFO line naming what was wrong, no traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError) and record.levelno > logging.INFO:
            message = str(error.message).splitlines()[0] if error.message else type(error).__name__
            record.msg = f"{record.getMessage()}: malformed request answered {error.code}: {message}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.levelno = logging.INFO
            record.levelname = logging.getLevelName(logging.INFO)
        return True


_MALFORMED = _MalformedRequestIsNoError()
_MESSAGE_CHARS = 300  # of aiohttp's message, which quotes the request


class _UniformErrors(RequestHandler):
    """aiohttp's connection handler, its own error answers (a request it cannot parse) in the
    uniform error object."""

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        plain = super().handle_error(request, status, exc, message)  # logs; closes the connection
        text = message if status < 500 else None
        code = INVALID_REQUEST if status < 500 else UNKNOWN_SERVER_ERROR
        answer = error_response(code, text[:_MESSAGE_CHARS] if text else None, status=plain.status)
        answer.force_close()
        return answer


class _Server(web.Server):
    def __call__(self) -> RequestHandler:
        return _UniformErrors(self, loop=self._loop, **self._kwargs)


class _Runner(web.AppRunner):
    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _Server  # the app's server as aiohttp builds it, with our handler
        return server


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
        self._runner = _Runner(app, handle_signals=False, shutdown_timeout=shutdown_timeout_s)
        server_log = logging.getLogger("aiohttp.server")
        if _MALFORMED not in server_log.filters:
            server_log.addFilter(_MALFORMED)
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
