"""The demo's machinery: a local ZooKeeper, ``reassignd`` processes, calls to the HTTP API, and
waiting that gives way to Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import aiohttp

from reassignd.api_client.client import ApiClient
from reassignd.api_client.errors import ClientError
from reassignd.contracts.cluster import Readiness, Status
from reassignd.zk.client import ZkClient
from reassignd.zk.server import LocalZooKeeper, ZooKeeperUnavailable, free_port
from reassignd.zk.values import SaslCredentials, ZkSettings

Json = dict[str, Any]
SASL_USER = "kafka"  # the principal of the secure demo (as a Kafka cluster's JAAS Client section)
T = TypeVar("T")


class DemoFailed(Exception):
    """A step did not succeed; the message says which, in one line."""


class Stopped(Exception):
    """Ctrl-C (or SIGTERM, or the end of ``--duration-s``) came while a step was waiting."""


def say(text: str) -> None:
    print(text, flush=True)


class DemoProcess:
    """A ``reassignd`` subcommand as a process of its own session (Ctrl-C reaches only the demo,
    which then stops its children in order), logging to a file."""

    def __init__(self, name: str, args: list[str], log_path: Path) -> None:
        self.name = name
        self.args = args
        self.log_path = log_path
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("REASSIGND_")}
        env["PYTHONUNBUFFERED"] = "1"
        with self.log_path.open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "reassignd",
                *self.args,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )

    @property
    def exited(self) -> int | None:
        return None if self.process is None else self.process.returncode

    def log_tail(self, lines: int = 15) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    async def stop(self, timeout_s: float = 15.0) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout_s``; the exit code (None if never started)."""
        if self.process is None:
            return None
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), timeout_s)
            except TimeoutError:
                say(f"{self.name} did not stop within {timeout_s:g} s; killing it")
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                await self.process.wait()
        return self.process.returncode


class LocalCluster:
    """ZooKeeper, the ``reassignd`` processes and an HTTP client for the controller. Every wait
    goes through :meth:`pause`, which raises :class:`Stopped` once ``stop`` is set."""

    def __init__(self, stop: asyncio.Event, *, secure: bool = False) -> None:
        self.stop = stop
        self.log_dir = Path(tempfile.mkdtemp(prefix="reassignd-demo-"))
        # secure: ZooKeeper knows one SASL user, whose password (made for this run) is in a file
        # of the log directory; the processes authenticate as it and set Kafka's ACLs
        self.sasl: SaslCredentials | None = None
        self.password_file = self.log_dir / "zk-password"
        if secure:
            self.sasl = SaslCredentials(SASL_USER, secrets.token_urlsafe(18))
            self.password_file.touch(mode=0o600)
            self.password_file.write_text(self.sasl.password + "\n")
        users = {self.sasl.user: self.sasl.password} if self.sasl is not None else None
        self.zookeeper = LocalZooKeeper(log_path=self.log_dir / "zookeeper.log", sasl_users=users)
        self.http_port = free_port()
        self.url = f"http://127.0.0.1:{self.http_port}"
        self.kafka_address = f"127.0.0.1:{free_port()}"  # the controller's Kafka listener
        self.children: list[DemoProcess] = []
        self.reported: set[str] = set()  # children whose failure was already printed
        self.session: aiohttp.ClientSession | None = None

    async def start_zookeeper(self) -> None:
        say(f"starting ZooKeeper (logs in {self.log_dir})")
        try:
            await asyncio.to_thread(self.zookeeper.start)
        except ZooKeeperUnavailable as e:
            raise DemoFailed(str(e)) from None
        say(f"ZooKeeper on {self.zookeeper.connect}")
        if self.sasl is not None:
            say(
                f"  SASL required for writes: every process authenticates as {self.sasl.user!r} "
                f"(password in {self.password_file}) and creates its znodes with Kafka's ACLs"
            )

    @property
    def zk_args(self) -> list[str]:
        """The ZooKeeper flags of every ``reassignd`` process that talks to ZooKeeper."""
        if self.sasl is None:
            return []
        return [
            "--zk-sasl-user",
            self.sasl.user,
            "--zk-sasl-password-file",
            str(self.password_file),
            "--zk-set-acl",
        ]

    async def start_child(self, name: str, args: list[str]) -> DemoProcess:
        child = DemoProcess(name, args, self.log_dir / f"{name}.log")
        self.children.append(child)
        await child.start()
        say(f"started reassignd {' '.join(args)}")
        return child

    async def wait_until_ready(self, brokers: int, timeout_s: float) -> list[int]:
        """The controller answers /readyz and sees ``brokers`` brokers; returns the live ids."""
        say(f"waiting for the controller at {self.url} and {brokers} brokers")
        deadline = time.monotonic() + timeout_s
        while True:
            self.check_children()
            ready = await self.maybe("/readyz", Readiness)  # None: not ready (503) or no answer
            if ready is not None and ready.status == "ready":
                status = await self.maybe("/v1/status", Status)
                live = list(status.brokers.live) if status is not None else []
                if status is not None and status.active and len(live) >= brokers:
                    say(f"ready: controller {status.controller_id} active, brokers {live}")
                    return live
            if time.monotonic() > deadline:
                raise DemoFailed(f"not ready within {timeout_s:g} s; see the logs in {self.log_dir}")
            await self.pause(0.25)

    @contextlib.asynccontextmanager
    async def zk(self) -> AsyncIterator[ZkClient]:
        """A ZooKeeper session of the demo's own, closed on the way out."""
        client = ZkClient(ZkSettings(self.zookeeper.connect, sasl=self.sasl, set_acl=self.sasl is not None))
        await client.start()
        try:
            yield client
        finally:
            await client.close()

    # waiting

    async def pause(self, seconds: float) -> None:
        """Sleep; raises :class:`Stopped` at once when stop is set (also when it already was)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)
        if self.stop.is_set():
            raise Stopped

    def check_children(self) -> None:
        for child in self.children:
            if child.exited is not None:
                self.reported.add(child.name)
                raise DemoFailed(
                    f"reassignd {child.name} exited with {child.exited}; last lines:\n{child.log_tail()}"
                )

    # HTTP

    def _api(self, base_url: str | None = None) -> ApiClient:
        """The API client on the demo's one HTTP session (of the controller, or of ``base_url``)."""
        if self.session is None:
            self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5))
        return ApiClient(self.session, base_url or self.url, timeout_s=5)

    async def typed(self, method: str, path: str, shape: type[T], body: object = None) -> T:
        """A controller request whose 200 answer is the contract's ``shape`` (decoded by the API
        client); anything else fails the demo."""
        try:
            return await self._api().typed(method, path, shape, body=body)
        except ClientError as e:
            raise DemoFailed(str(e)) from None

    async def maybe(self, path: str, shape: type[T]) -> T | None:
        """GET the contract's ``shape``; None for a connection error or another status than 200."""
        try:
            return await self._api().typed("GET", path, shape)
        except ClientError:
            return None

    async def call(self, method: str, path: str, body: Json | None = None) -> Json:
        """A request that must answer 200 with a JSON object; anything else fails the demo.
        ``path`` is on the controller, or a whole URL (a broker agent's)."""
        base_url = None
        if path.startswith("http://"):
            url = urlsplit(path)
            base_url = f"{url.scheme}://{url.netloc}"
            path = url.path + (f"?{url.query}" if url.query else "")
        try:
            status, doc = await self._api(base_url).exchange(method, path, body=body)
        except ClientError as e:
            raise DemoFailed(f"{method} {path}: {e}") from None
        if status != 200 or not isinstance(doc, dict):
            raise DemoFailed(f"{method} {path} answered {status}: {json.dumps(doc)[:300]}")
        return doc

    # the end

    async def close(self) -> bool:
        """Stop the processes (all at once), then ZooKeeper; True when every process stopped cleanly."""
        if self.session is not None:
            await self.session.close()
        if self.children:
            say("stopping " + ", ".join(c.name for c in self.children))
        codes = await asyncio.gather(*(c.stop() for c in self.children))
        clean = True
        for child, code in zip(self.children, codes, strict=True):
            if code not in (0, None):
                clean = False
                if child.name not in self.reported:
                    say(f"reassignd {child.name} exited with {code}; last lines:\n{child.log_tail()}")
        await asyncio.to_thread(self.zookeeper.stop)
        say(f"stopped; logs are in {self.log_dir}")
        return clean
