"""The broker agent: one asyncio task group per agent, its own ZooKeeper session and HTTP port.

Startup: open the listener (log ``listening on <url>``), open the ZooKeeper session, read the
broker configs, register ``/brokers/ids/<id>`` (broker epoch = its czxid). Then fetchers, ISR
changes, config watches and session supervision run until ``stop`` is set. A session expiry
re-registers (new czxid, new epoch) and re-arms every watch. A clean stop closes the session, so
the registration disappears at once.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import time
from collections.abc import Callable, Iterable, Sequence

import aiohttp
from aiohttp import web

from reassignd.broker.config_watch import ConfigWatcher
from reassignd.broker.control import ControlRoutes
from reassignd.broker.fetcher import Fetchers
from reassignd.broker.isr import IsrManager
from reassignd.broker.registration import register, registration
from reassignd.broker.settings import BrokerSettings
from reassignd.broker.state import ReplicaManager
from reassignd.errors import starting
from reassignd.zk import paths
from reassignd.zk.client import ZkClient
from reassignd.zk.codec import CodecError, decode_broker
from reassignd.zk.errors import ZkError, ZkTimeoutError
from reassignd.zk.values import DEFAULT_REQUEST_TIMEOUT_S, SessionState

HTTP_TIMEOUT_S = 5.0
RETRY_S = 1.0
# Agents keep a large, long-lived heap (every hosted replica) and churn through short-lived JSON
# objects: at Python's default (700) the cyclic GC runs so often that it doubles the cost of
# parsing a control request, and its full collections stall the event loop.
GC_GEN0_THRESHOLD = 20_000


class BrokerAgent:
    def __init__(self, settings: BrokerSettings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._clock = clock
        self._log = logging.getLogger(f"reassignd.broker.{settings.broker_id}")
        self.mgr = ReplicaManager(
            settings.broker_id,
            replication_bytes_per_s=settings.replication_bytes_per_s,
            default_produce_bytes_per_s=settings.produce_bytes_per_s,
            log_dirs=settings.log_dirs,
            now=clock(),
        )
        self.zk = ZkClient(
            settings.zk_security.zk_settings(
                settings.zk_connect,
                settings.session_timeout_s,
                DEFAULT_REQUEST_TIMEOUT_S,
                role=f"broker-{settings.broker_id}",
            )
        )
        self.port: int | None = None
        self._registered = asyncio.Event()
        self._sessions: asyncio.Queue[SessionState] = asyncio.Queue()
        self._config = ConfigWatcher(self.zk, self.mgr, settings, clock, self.replicas_changed)
        self._isr = IsrManager(self.zk, self.mgr, settings, clock)
        self._fetchers: Fetchers | None = None
        self._moves = asyncio.Event()  # a move between log dirs was asked for

    # --- AgentHooks (for the control routes) ----------------------------------------------------

    @property
    def registered(self) -> asyncio.Event:
        return self._registered

    async def ensure_topics(self, topics: Iterable[str]) -> None:
        await self._config.ensure_topics(topics)

    def replicas_changed(self) -> None:
        if self._fetchers is not None:
            self._fetchers.reconcile()
        self._isr.nudge()

    def followers_caught_up(self) -> None:
        self._isr.nudge()

    def log_dir_moves_changed(self) -> None:
        self._moves.set()

    # --- lifecycle -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.port}"

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set; raises if the agent cannot start (port, ZooKeeper, id in use)."""
        s = self.settings
        sock = socket.socket(socket.AF_INET6 if ":" in s.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        host = f"[{s.host}]" if ":" in s.host else s.host
        try:
            with starting(f"broker {s.broker_id} cannot listen on {host}:{s.control_port} (--control-port)"):
                sock.bind((s.host, s.control_port))
        except BaseException:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        runner = web.AppRunner(ControlRoutes(self.mgr, self, self._clock).app(), access_log=None)
        await runner.setup()
        try:
            await web.SockSite(runner, sock).start()
            self._log.info("listening on %s", self.url)
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=HTTP_TIMEOUT_S)) as http:
                self._fetchers = Fetchers(self.mgr, http, self._resolve, s, self._clock)
                try:
                    await self._serve(stop, self._fetchers)
                finally:
                    await self.zk.close()  # first: the registration goes at once
        finally:
            await runner.cleanup()
            sock.close()

    async def _serve(self, stop: asyncio.Event, fetchers: Fetchers) -> None:
        """Until ``stop``, even while still starting (a registration may wait out an old session)."""
        b = self.settings.broker_id
        async with asyncio.TaskGroup() as tg:
            serving = tg.create_task(self._start_and_run(fetchers), name=f"broker-{b}-main")
            stopping = tg.create_task(stop.wait(), name=f"broker-{b}-stop")
            await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            self._log.info("stopping")
            serving.cancel()
            stopping.cancel()

    async def _start_and_run(self, fetchers: Fetchers) -> None:
        with starting(f"ZooKeeper unreachable (--zk {self.settings.zk_connect})", ZkTimeoutError):
            await self.zk.start()
        self.zk.on_session_state(self._sessions.put_nowait)
        await self._config.load_broker()
        await self._register()
        b = self.settings.broker_id
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._supervise_session(), name=f"broker-{b}-session")
            tg.create_task(self._config.run(), name=f"broker-{b}-config")
            tg.create_task(fetchers.run(), name=f"broker-{b}-fetchers")
            tg.create_task(self._isr.run(), name=f"broker-{b}-isr")
            tg.create_task(self._move_log_dirs(), name=f"broker-{b}-log-dir-moves")

    async def _move_log_dirs(self) -> None:
        """Copy the future replicas once per fetch interval while there are any (Kafka's
        ReplicaAlterLogDirsThread); a completed copy replaces the current replica."""
        while True:
            done = self.mgr.advance_moves(self._clock())
            for topic, partition in done:
                self._log.info(
                    "moved %s-%d to log dir %s", topic, partition, self.mgr.dirs.dir_of[(topic, partition)]
                )
            if self.mgr.dirs.futures:
                await asyncio.sleep(self.settings.fetch_interval_s)
            else:
                await self._moves.wait()
                self._moves.clear()
                self.mgr.advance_moves(self._clock())  # the copies start from now

    async def _register(self) -> None:
        s = self.settings
        assert self.port is not None
        reg = registration(s.broker_id, s.host, self.port, s.rack, int(time.time() * 1000))
        epoch = await register(self.zk, reg, wait_s=max(30.0, 3 * s.session_timeout_s))
        self.mgr.broker_epoch = epoch
        self._registered.set()
        self._log.info("registered %s with broker epoch %d", paths.broker(s.broker_id), epoch)

    async def _supervise_session(self) -> None:
        while True:
            state = await self._sessions.get()
            if state is SessionState.SUSPENDED:
                self._log.warning("ZooKeeper connection lost; session may still be alive")
            elif state is SessionState.EXPIRED:
                self._log.warning("ZooKeeper session expired; registering again")
                self._registered.clear()
                self.mgr.broker_epoch = None
                self._config.session_lost()
                while True:
                    try:
                        await self._register()
                        break
                    except ZkError as e:
                        self._log.warning("registration failed (%s); retrying", e)
                        await asyncio.sleep(RETRY_S)

    async def _resolve(self, broker_id: int) -> str | None:
        """A broker's control URL from its registration znode (None if not registered)."""
        try:
            znode = await self.zk.get_or_none(paths.broker(broker_id))
            if znode is None:
                return None
            url = decode_broker(broker_id, znode.data).control_url
        except (ZkError, CodecError) as e:
            self._log.info("cannot resolve broker %d (%s)", broker_id, e)
            return None
        if url is not None:
            self.mgr.endpoints[broker_id] = url
        return url


async def run_agents(settings: Sequence[BrokerSettings], stop: asyncio.Event) -> None:
    """Run one agent per settings in this process (each with its own ZooKeeper session and port)
    until ``stop`` is set. If one agent fails, the others are stopped and the error is raised."""
    agents = [BrokerAgent(s) for s in settings]
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], GC_GEN0_THRESHOLD), *thresholds[1:])
    try:
        async with asyncio.TaskGroup() as tg:
            for agent in agents:
                tg.create_task(agent.run(stop), name=f"broker-{agent.settings.broker_id}")
    finally:
        gc.set_threshold(*thresholds)
