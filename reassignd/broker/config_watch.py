"""Config znodes the agent follows: ``/config/brokers/<id>``, ``/config/brokers/<default>`` and
``/config/topics/<t>`` of the topics it hosts.

Watch callbacks only record the path and wake the reader task, which re-reads the znode (and
re-arms the one-shot watch): duplicate or coalesced notifications are harmless.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

from reassignd.broker.settings import BrokerSettings
from reassignd.broker.sim_config import broker_sim_config, topic_sim_config
from reassignd.broker.state import ReplicaManager
from reassignd.zk import paths
from reassignd.zk.admin_codec import decode_entity_config
from reassignd.zk.client import ZkClient
from reassignd.zk.codec import CodecError
from reassignd.zk.errors import ZkError

RETRY_S = 1.0


class ConfigWatcher:
    def __init__(
        self,
        zk: ZkClient,
        mgr: ReplicaManager,
        settings: BrokerSettings,
        clock: Callable[[], float],
        on_change: Callable[[], None],
    ) -> None:
        self._zk = zk
        self._mgr = mgr
        self._settings = settings
        self._clock = clock
        self._on_change = on_change
        self._log = logging.getLogger(f"reassignd.broker.{settings.broker_id}.config")
        self._own = paths.config_broker(settings.broker_id)
        self._default = paths.config_broker(None)
        self._configs: dict[str, dict[str, str] | None] = {}  # path -> last decoded config
        self._topics: set[str] = set()  # topics whose config is loaded and watched
        self._armed: set[str] = set()
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()

    def _fired(self, path: str) -> None:
        self._armed.discard(path)
        self._dirty.add(path)
        self._wake.set()

    async def _read(self, path: str) -> None:
        """Read a config znode (arming its watch once); raises ZkError."""
        watch = None if path in self._armed else self._fired
        znode = await self._zk.get_or_none(path, watch=watch)
        if watch is not None:
            self._armed.add(path)
        if znode is None:
            self._configs[path] = None
            return
        try:
            self._configs[path] = decode_entity_config(znode.data)
        except CodecError as e:
            self._log.warning("%s: cannot decode (%s); keeping the previous config", path, e.reason)

    def _apply_broker(self) -> None:
        config = broker_sim_config(
            self._configs.get(self._own),
            self._configs.get(self._default),
            self._settings.replication_bytes_per_s,
        )
        for problem in config.problems:
            self._log.warning("broker config: %s", problem)
        if config != self._mgr.broker_config:
            self._log.info(
                "replication %.0f B/s, leader throttle %s B/s, follower throttle %s B/s",
                config.replication_bytes_per_s,
                config.leader_throttled_rate,
                config.follower_throttled_rate,
            )
            self._mgr.set_broker_config(config, self._clock())
            self._on_change()

    def _apply_topic(self, topic: str) -> None:
        config = topic_sim_config(
            self._configs.get(paths.config_topic(topic)), self._settings.produce_bytes_per_s
        )
        for problem in config.problems:
            self._log.warning("topic %s config: %s", topic, problem)
        if self._mgr.topic_configs.get(topic) != config:
            self._mgr.set_topic_config(topic, config, self._clock())
            self._on_change()

    async def load_broker(self) -> None:
        """Read both broker config znodes (raises ZkError)."""
        await self._read(self._own)
        await self._read(self._default)
        self._apply_broker()

    async def ensure_topics(self, topics: Iterable[str]) -> None:
        """Load (and watch) the config of topics not loaded yet; raises ZkError."""
        new = sorted(set(topics) - self._topics)
        if not new:
            return
        errors: list[ZkError] = []

        async def read(topic: str) -> None:
            try:
                await self._read(paths.config_topic(topic))
            except ZkError as e:
                errors.append(e)

        async with asyncio.TaskGroup() as tg:  # pipelined reads
            for t in new:
                tg.create_task(read(t), name=f"broker-{self._settings.broker_id}-config-{t}")
        if errors:
            raise errors[0]
        for t in new:
            self._apply_topic(t)
            self._topics.add(t)

    def session_lost(self) -> None:
        """Every watch went with the old session: re-read (and re-arm) everything."""
        self._armed.clear()
        self._dirty.update([self._own, self._default, *(paths.config_topic(t) for t in self._topics)])
        self._wake.set()

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            dirty, self._dirty = self._dirty, set()
            hosted = self._mgr.hosted_topics()
            try:
                for path in sorted(dirty):
                    await self._reread(path, hosted)
            except ZkError as e:
                self._log.warning("reading config failed (%s); retrying", e)
                self._dirty.update(dirty)
                await asyncio.sleep(RETRY_S)
                self._wake.set()

    async def _reread(self, path: str, hosted: set[str]) -> None:
        if path in (self._own, self._default):
            await self._read(path)
            self._apply_broker()
            return
        topic = paths.basename(path)
        if topic not in hosted:
            self._topics.discard(topic)  # stop watching; a later LeaderAndIsr loads it again
            self._configs.pop(path, None)
            self._mgr.topic_configs.pop(topic, None)
            return
        await self._read(path)
        self._apply_topic(topic)
