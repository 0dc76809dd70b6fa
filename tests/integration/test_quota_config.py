"""Quota configs against a real ZooKeeper, stored as Kafka stores them: AlterClientQuotas then a
full load, a quota written straight into ZooKeeper (as ``kafka-configs --zookeeper`` did) picked
up through ``/config/changes``, malformed configs reported and skipped, URL-encoded names."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass

import pytest

from reassignd.quotas.config_changes import ConfigChangeReader, ConfigChanges, reread_quota_entities
from reassignd.quotas.config_store import (
    QuotaConfigError,
    QuotaEntry,
    alter_quota,
    describe_quotas,
    load_quota_configs,
)
from reassignd.quotas.entities import DEFAULT
from reassignd.quotas.manager import QuotaManager
from reassignd.zk import paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import NoNodeError
from reassignd.zk.values import WatchCallback

pytestmark = pytest.mark.timeout(60)

Reports = list[tuple[str, str, str]]


class Recorder:
    def __init__(self) -> None:
        self.reports: Reports = []

    def __call__(self, path: str, reason: str, kind: str) -> None:
        self.reports.append((path, reason, kind))


@dataclass(frozen=True, slots=True)
class ToolWrites:
    """The change reader's writes as a tool makes them: unfenced (the controller's go through its
    event's fenced writes)."""

    zk: ZkClient

    async def children(self, path: str, watch: WatchCallback | None) -> list[str]:
        return await self.zk.children(path, watch=watch)

    async def delete(self, path: str) -> None:
        with contextlib.suppress(NoNodeError):
            await self.zk.delete(path)


async def read_json(zk: ZkClient, path: str) -> object:
    znode = await zk.get(path)
    assert znode.data is not None
    return json.loads(znode.data)


async def notifications(zk: ZkClient) -> list[object]:
    names = sorted(await zk.children(paths.CONFIG_CHANGES))
    return [await read_json(zk, paths.config_change(name)) for name in names]


async def test_alter_then_load_round_trip(zk: ZkClient) -> None:
    await alter_quota(zk, "alice", None, 2.0)
    await alter_quota(zk, "alice", "app", 5)
    await alter_quota(zk, DEFAULT, None, 1.5)
    await alter_quota(zk, None, DEFAULT, 0.5)
    await alter_quota(zk, DEFAULT, DEFAULT, 3.0)

    assert await read_json(zk, "/config/users/alice/clients/app") == {
        "version": 1,
        "config": {"controller_mutation_rate": "5.0"},
    }
    assert await notifications(zk) == [
        {"version": 2, "entity_path": path}
        for path in (
            "users/alice",
            "users/alice/clients/app",
            "users/<default>",
            "clients/<default>",
            "users/<default>/clients/<default>",
        )
    ]
    recorder = Recorder()
    assert await load_quota_configs(zk, recorder) == {
        ("alice", None): 2.0,
        ("alice", "app"): 5.0,
        (DEFAULT, None): 1.5,
        (None, DEFAULT): 0.5,
        (DEFAULT, DEFAULT): 3.0,
    }
    assert recorder.reports == []


async def test_alter_merges_into_the_config_and_removal_keeps_the_znode(zk: ZkClient) -> None:
    await zk.create(
        "/config/users/alice",
        b'{"version":1,"config":{"producer_byte_rate":"1024","SCRAM-SHA-256":"salt=..."}}',
        make_parents=True,
    )
    await alter_quota(zk, "alice", None, 4.0)
    assert await read_json(zk, "/config/users/alice") == {
        "version": 1,
        "config": {
            "SCRAM-SHA-256": "salt=...",
            "controller_mutation_rate": "4.0",
            "producer_byte_rate": "1024",
        },
    }
    assert await describe_quotas(zk, user="alice") == [
        QuotaEntry("alice", None, {"controller_mutation_rate": 4.0, "producer_byte_rate": 1024.0})
    ]
    await alter_quota(zk, "alice", None, None)
    await alter_quota(zk, "alice", None, None, key="producer_byte_rate")
    assert await read_json(zk, "/config/users/alice") == {
        "version": 1,
        "config": {"SCRAM-SHA-256": "salt=..."},
    }
    await alter_quota(zk, "carol", None, None)  # like Kafka: an empty config znode, and a notification
    assert await read_json(zk, "/config/users/carol") == {"version": 1, "config": {}}
    assert len(await notifications(zk)) == 4
    assert await load_quota_configs(zk) == {}
    assert await describe_quotas(zk) == []


async def test_alter_refuses_to_overwrite_a_malformed_znode(zk: ZkClient) -> None:
    await zk.create("/config/users/mallory", b"{not json", make_parents=True)
    with pytest.raises(QuotaConfigError, match="cannot decode"):
        await alter_quota(zk, "mallory", None, 1.0)
    assert (await zk.get("/config/users/mallory")).data == b"{not json"
    written = await alter_quota(zk, "alice", None, 1.0)
    assert written.startswith(paths.CONFIG_CHANGE_PREFIX)
    assert await load_quota_configs(zk) == {("alice", None): 1.0}
    assert len(await notifications(zk)) == 1  # the write and its notification went together


async def test_a_direct_write_plus_notification_is_picked_up_by_the_change_reader(zk: ZkClient) -> None:
    await alter_quota(zk, "alice", None, 2.0)
    reader = ConfigChangeReader()
    fired = asyncio.Event()

    def watch(_path: str) -> None:
        fired.set()

    assert await reader.skip_existing(zk, now_s=0.0, watch=watch) == 0  # then the full load
    quotas = await load_quota_configs(zk)
    manager = QuotaManager(window_num=10)
    manager.set_quotas(quotas)
    assert manager.resolve("bob", "app") is None

    # What a Kafka tool does: write the entity, then a version-2 notification naming it.
    await zk.create(
        "/config/users/bob", b'{"version":1,"config":{"controller_mutation_rate":"10.0"}}', make_parents=True
    )
    await zk.create(paths.CONFIG_CHANGE_PREFIX, b'{"version":2,"entity_path":"users/bob"}', sequential=True)
    await asyncio.wait_for(fired.wait(), timeout=10)
    fired.clear()

    changes = await reader.read(zk, now_s=1.0, watch=watch)
    assert changes == ConfigChanges(("users/bob",), last_seq=1)
    quotas = await reread_quota_entities(zk, changes, quotas)
    assert quotas == {("alice", None): 2.0, ("bob", None): 10.0}
    manager.set_quotas(quotas)
    assert manager.charge_in_order("bob", "app", [90, 90, 90], now_s=1.0)[2].throttle_ms == 8000

    # Removal via a version-1 notification (entity_type/entity_name) is understood too.
    await zk.set("/config/users/bob", b'{"version":1,"config":{}}', -1)
    await zk.create(
        paths.CONFIG_CHANGE_PREFIX,
        b'{"version":1,"entity_type":"users","entity_name":"bob"}',
        sequential=True,
    )
    await asyncio.wait_for(fired.wait(), timeout=10)
    changes = await reader.read(zk, now_s=2.0)
    assert changes.quota_entities == (("bob", None),)
    assert await reread_quota_entities(zk, changes, quotas) == {("alice", None): 2.0}
    assert (await reader.read(zk, now_s=3.0)).entity_paths == ()  # nothing newer

    # A malformed entity named by a notification is reported; its previous quota stays.
    recorder = Recorder()
    await zk.set("/config/users/alice", b'{"version":1,"config":{"controller_mutation_rate":"lots"}}', -1)
    await zk.create(paths.CONFIG_CHANGE_PREFIX, b'{"version":2,"entity_path":"users/alice"}', sequential=True)
    changes = await reader.read(zk, now_s=4.0)
    assert await reread_quota_entities(zk, changes, quotas, recorder) == quotas
    assert recorder.reports == [
        ("/config/users/alice", "controller_mutation_rate: not a decimal number: 'lots'", "quota_config")
    ]


async def test_malformed_configs_and_notifications_are_reported_and_skipped(zk: ZkClient) -> None:
    good = b'{"version":1,"config":{"controller_mutation_rate":"3"}}'
    bad = {
        "/config/users/badjson": b"{oops",
        "/config/users/badversion": b'{"version":9,"config":{}}',
        "/config/users/badtype": b'{"version":1,"config":{"controller_mutation_rate":3}}',
        "/config/clients/badvalue": b'{"version":1,"config":{"controller_mutation_rate":"fast"}}',
        "/config/users/u/clients/negative": b'{"version":1,"config":{"controller_mutation_rate":"-1"}}',
    }
    for path, data in bad.items():
        await zk.create(path, data, make_parents=True)  # /config/users/u itself: null data, no quota
    await zk.create("/config/users/u/clients/good", good)
    await zk.create("/config/clients/empty", b"", make_parents=True)

    recorder = Recorder()
    assert await load_quota_configs(zk, recorder) == {("u", "good"): 3.0}
    assert sorted(path for path, _, _ in recorder.reports) == sorted(bad)
    assert {kind for _, _, kind in recorder.reports} == {"quota_config"}
    reasons = dict((path, reason) for path, reason, _ in recorder.reports)
    assert reasons["/config/clients/badvalue"] == "controller_mutation_rate: not a decimal number: 'fast'"
    assert "must be a string" in reasons["/config/users/badtype"]

    # A malformed notification is reported and passed over; the reader goes on.
    reader = ConfigChangeReader(report=recorder)
    await zk.create(paths.CONFIG_CHANGE_PREFIX, b"garbage", sequential=True, make_parents=True)
    await zk.create(paths.CONFIG_CHANGE_PREFIX, b'{"version":2,"entity_path":"users/u"}', sequential=True)
    changes = await reader.read(zk, now_s=0.0)
    assert changes.entity_paths == ("users/u",)
    assert changes.last_seq == 1
    assert recorder.reports[-1][0] == "/config/changes/config_change_0000000000"
    assert recorder.reports[-1][2] == "config_change"


async def test_url_encoded_names(zk: ZkClient) -> None:
    user, client = "CN=a b*", "app/1 ~x"
    await alter_quota(zk, user, client, 7.0)
    await alter_quota(zk, user, None, 1.0)
    assert sorted(await zk.children("/config/users")) == ["CN%3Da%20b%2A"]
    assert await zk.children("/config/users/CN%3Da%20b%2A/clients") == ["app%2F1%20%7Ex"]
    assert [n["entity_path"] for n in await notifications(zk) if isinstance(n, dict)] == [
        "users/CN%3Da%20b%2A/clients/app%2F1%20%7Ex",
        "users/CN%3Da%20b%2A",
    ]
    assert await load_quota_configs(zk) == {(user, client): 7.0, (user, None): 1.0}
    assert await describe_quotas(zk, user=user, client_id=client) == [
        QuotaEntry(user, client, {"controller_mutation_rate": 7.0})
    ]
    manager = QuotaManager()
    manager.set_quotas(await load_quota_configs(zk))
    found = manager.resolve(user, client)
    assert found is not None and found.rate_per_s == 7.0


async def test_describe_filters(zk: ZkClient) -> None:
    for user, client, rate in (
        ("alice", None, 1.0),
        ("alice", "app", 2.0),
        ("bob", "app", 3.0),
        (None, "app", 4.0),
        (DEFAULT, None, 5.0),
    ):
        await alter_quota(zk, user, client, rate)

    def entities(entries: list[QuotaEntry]) -> list[tuple[str | None, str | None]]:
        return [(e.user, e.client_id) for e in entries]

    everything = await describe_quotas(zk)
    assert entities(everything) == [
        (None, "app"),
        ("<default>", None),
        ("alice", None),
        ("alice", "app"),
        ("bob", "app"),
    ]
    assert entities(await describe_quotas(zk, user="alice")) == [("alice", None), ("alice", "app")]
    assert entities(await describe_quotas(zk, client_id="app")) == [
        (None, "app"),
        ("alice", "app"),
        ("bob", "app"),
    ]
    assert entities(await describe_quotas(zk, user="bob", client_id="app")) == [("bob", "app")]
    assert await describe_quotas(zk, user="nobody") == []
    assert entities(await describe_quotas(zk, user=DEFAULT)) == [(DEFAULT, None)]


async def test_old_notifications_are_purged_after_fifteen_minutes(zk: ZkClient) -> None:
    await alter_quota(zk, "alice", None, 1.0)
    await alter_quota(zk, "bob", None, 1.0)
    reader = ConfigChangeReader()
    writes = ToolWrites(zk)
    first = await reader.read(zk, now_s=0.0, writes=writes)
    assert (first.entity_paths, first.purged) == (("users/alice", "users/bob"), ())
    await alter_quota(zk, "carol", None, 1.0)
    later = await reader.read(zk, now_s=899.0, writes=writes)
    assert (later.entity_paths, later.purged) == (("users/carol",), ())
    reading_only = ConfigChangeReader()  # no writes: it only reads, and purges nothing
    assert (await reading_only.read(zk, now_s=0.0)).purged == ()
    assert (await reading_only.read(zk, now_s=900.0)).purged == ()
    purge = await reader.read(zk, now_s=900.0, writes=writes)  # alice's and bob's: seen 15 minutes ago
    assert purge.entity_paths == ()
    assert purge.purged == (
        "/config/changes/config_change_0000000000",
        "/config/changes/config_change_0000000001",
    )
    assert await zk.children(paths.CONFIG_CHANGES) == ["config_change_0000000002"]
    standby = ConfigChangeReader(purge_after_s=None)
    assert (await standby.read(zk, now_s=1e9, writes=writes)).purged == ()
    assert (await ConfigChangeReader().read(zk, now_s=0.0)).entity_paths == ("users/carol",)
