"""Helpers for the in-process tests of the Kafka listener's front door: a ``KafkaListener`` on a
(real or given) controller API in the test's event loop, and an asyncio client that sends
kafka-python's request classes on one connection and decodes the answers."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import struct
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

from kafka.protocol.api_message import ApiMessage

from reassignd.agent_reports.session import agents_session
from reassignd.controller.api.controller_api import ControllerApi
from reassignd.controller.settings import ControllerSettings
from reassignd.kafka_listener.server import KafkaListener
from reassignd.tokens import Principal


@contextlib.asynccontextmanager
async def listening(
    api: object, settings: ControllerSettings, tokens: Mapping[str, Principal] | None = None, **changes: Any
) -> AsyncIterator[KafkaListener]:
    config = dataclasses.replace(settings, kafka_listener_host="127.0.0.1", kafka_listener_port=0, **changes)
    async with agents_session() as agents:
        listener = KafkaListener(cast(ControllerApi, api), config, tokens, agents=agents)
        await listener.start()
        try:
            yield listener
        finally:
            await listener.stop()


class Client:
    """One connection; ``call`` sends a request and returns its decoded response, or raises
    ConnectionError when the listener closed the connection instead."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._correlation = 0

    @classmethod
    async def open(cls, listener: KafkaListener) -> Client:
        assert listener.address is not None
        host, _, port = listener.address.rpartition(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer)

    async def call(self, request: ApiMessage, version: int, timeout_s: float = 20.0) -> Any:
        self._correlation += 1
        request.API_VERSION = version
        request.with_header(correlation_id=self._correlation, client_id="door-test")
        self.writer.write(request.encode(header=True, framed=True))
        await self.writer.drain()
        try:
            async with asyncio.timeout(timeout_s):
                (size,) = struct.unpack(">i", await self.reader.readexactly(4))
                payload = await self.reader.readexactly(size)
        except asyncio.IncompleteReadError as e:
            raise ConnectionError("closed by the listener") from e
        name = type(request).__name__.replace("Request", "Response")
        module = __import__(type(request).__module__, fromlist=[name])
        response = getattr(module, name).decode(payload, version=version, header=True)
        assert response.header.correlation_id == self._correlation
        return response

    async def closed_by_peer(self, timeout_s: float = 10.0) -> bool:
        """Whether the listener closes the connection (EOF) within ``timeout_s``."""
        try:
            async with asyncio.timeout(timeout_s):
                return await self.reader.read(1) == b""
        except (TimeoutError, ConnectionError):
            return False

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()
