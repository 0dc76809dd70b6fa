"""Adversarial inputs: what a viewer, an admin, an unauthenticated client and another ZooKeeper
principal can send, each sent repeatedly through the real doors (the HTTP API with the tokens
file's tokens, the Kafka listener with SASL/PLAIN, raw sockets, ZooKeeper) while moves are in
flight with two controllers running. Each case asserts the client's answer (Kafka's or HTTP's
error, no disconnect on the Kafka wire except where Kafka itself closes: the frame cap before
authentication and the per-address connection cap) and that nothing of a refused request was
written (read back from ZooKeeper); the shared scenario (tests/faults/inputs.py) then checks the
epoch (moved at most once), the report (where the input reaches the controller), a new move
accepted and completed, every accepted move completed, nothing stray or offline, and the
controllers' resident memory.

``adversarial(env, seed, case)`` runs one case (``CASES``); ``bench/faults.py --kinds
adversarial`` runs a case per seed (``seed % len(CASES)``).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import uuid
from typing import Any, cast

import aiohttp
from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterPartitionReassignmentsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
)
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest

from reassignd.testing.polling import eventually
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.errors import NodeExistsError, NoNodeError
from reassignd.zk.server import free_port
from tests.faults import kafka_wire
from tests.faults.inputs import Case, Run, input_scenario
from tests.faults.kafka_wire import ADMIN, VIEWER
from tests.faults.poison import CASES as POISON_CASES
from tests.faults.scenarios import Controllers, Env, Outcome, make_topic, wait_online
from tests.integration.harness import ControllerProc, http_request
from tests.zk_acl import disown, own

ADMIN_TOKEN, VIEWER_TOKEN = ADMIN[1], VIEWER[1]
REPEAT = 5  # each input is sent this many times (the cheap ones more)
WIDE = 1_000  # partitions of topic "wide"
LIMIT = 100  # --max-partitions-per-request of the cases that pass it
OVER_1MIB = 1_100_000
TOPIC, BROKER = 2, 4  # Kafka's config resource types
SET = 0  # IncrementalAlterConfigs' SET operation


class Doors(Controllers):
    """Controllers with a tokens file and a Kafka listener each; the HTTP API is used with the
    admin token."""

    def __init__(self, env: Env) -> None:
        tokens = env.procs.log_dir / "tokens.toml"
        tokens.write_text(kafka_wire.TOKENS)
        super().__init__(env, "--auth-tokens", str(tokens), token=ADMIN_TOKEN)
        self.kafka: dict[int, str] = {}

    def start(self, controller_id: int, zk_connect: str | None = None, *extra: str) -> ControllerProc:
        address = f"127.0.0.1:{free_port()}"
        self.kafka[controller_id] = address
        return super().start(controller_id, zk_connect, "--kafka-listener", address, *extra)


async def _active(run: Run) -> ControllerProc:
    c = await run.controllers.wait_active()
    assert c is not None, "no active controller"
    return c


async def _kafka(run: Run) -> str:
    """The active controller's Kafka listener address."""
    return cast(Doors, run.controllers).kafka[(await _active(run)).controller_id]


async def _call(run: Run, user: tuple[str, str], request: Any, version: int) -> Any:
    """One request on a fresh authenticated connection; a disconnect raises ConnectionError."""
    async with kafka_wire.session(await _kafka(run), user) as client:
        return await client.call(request, version)


async def _http(run: Run, method: str, path: str, token: str | None, body: Any = None) -> tuple[int, Any]:
    return await http_request(method, (await _active(run)).url + path, body, token=token)


async def _http_body(run: Run, path: str, token: str, data: bytes) -> tuple[int, Any]:
    """POST a body of raw bytes (big ones streamed, as aiohttp asks)."""
    url = (await _active(run)).url + path
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    async with aiohttp.ClientSession() as http, http.post(url, data=io.BytesIO(data), headers=headers) as r:
        return r.status, await r.json() if r.content_type == "application/json" else None


async def _topic(run: Run, name: str) -> codec.TopicZnode | None:
    znode = await run.env.zk.get_or_none(paths.topic(name))
    return None if znode is None else codec.decode_topic(znode.data)


async def _unmoved(run: Run, name: str) -> str | None:
    """A violation when topic ``name`` has anything adding or removing."""
    z = await _topic(run, name)
    if z is not None and (z.adding or z.removing):
        return f"a refused request was written: topic {name} is reassigning"
    return None


async def _absent(run: Run, *znodes: str) -> str | None:
    for path in znodes:
        if await run.env.zk.exists(path) is not None:
            return f"a refused request was written: {path} exists"
    return None


async def _wide(run: Run) -> str | None:
    """Topic ``wide``: 1,000 partitions, one replica each on brokers 1-5."""
    await make_topic(run.env.zk, "wide", {p: (1 + p % 5,) for p in range(WIDE)})
    if not await wait_online(run.env.zk, [("wide", p) for p in range(WIDE)], timeout_s=90.0):
        return "topic wide did not come online"
    run.expected.update({("wide", p): (1 + p % 5,) for p in range(WIDE)})
    return None


def _codes(items: Any, what: str = "error_code") -> set[int]:
    return {getattr(i, what) for i in items}


# --- a viewer -------------------------------------------------------------------------------------


async def _metadata_repeated_topic(run: Run) -> str | None:
    """Metadata naming the 1,000-partition topic 700 times: one entry, built once."""
    request = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name="wide")] * 700,
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    async with kafka_wire.session(await _kafka(run), VIEWER) as client:
        for _ in range(REPEAT * 2):
            response = await client.call(request, 9)
            names = [t.name for t in response.topics]
            if names != ["wide"] or len(response.topics[0].partitions) != WIDE:
                return f"expected one entry of {WIDE} partitions, got {names[:3]} ({len(names)} entries)"
    return None


async def _metadata_all_topics(run: Run) -> str | None:
    """Metadata for every topic, three times each on 20 connections at once."""
    address = await _kafka(run)
    request = MetadataRequest(
        topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )

    async def one() -> str | None:
        async with kafka_wire.session(address, VIEWER) as client:
            for _ in range(3):
                names = {t.name for t in (await client.call(request, 9)).topics}
                if not {"wide", "t", "u"} <= names:
                    return f"Metadata for all topics answered {sorted(names)[:5]}"
        return None

    found = [p for p in await asyncio.gather(*(one() for _ in range(20))) if p is not None]
    return found[0] if found else None


async def _http_floods(run: Run) -> str | None:
    """GET /v1/reassignments, /v1/topics/wide and /metrics, 20 of each at once, as a viewer; a
    viewer's POST is 403 and writes nothing."""
    for _ in range(REPEAT):
        answers = await asyncio.gather(
            *(
                _http(run, "GET", path, VIEWER_TOKEN)
                for path in ("/v1/reassignments", "/v1/topics/wide", "/metrics")
                for _ in range(20)
            )
        )
        if bad := [code for code, _ in answers if code != 200]:
            return f"a viewer's GET answered {bad[:5]}"
        body = {"topics": [{"name": "u", "partitions": [{"partition": 0, "replicas": [3, 4]}]}]}
        code, _ = await _http(run, "POST", "/v1/reassignments", VIEWER_TOKEN, body)
        if code != 403:
            return f"a viewer's POST /v1/reassignments answered {code}, expected 403"
    return await _unmoved(run, "u")


async def _viewer_writes(run: Run) -> str | None:
    """A viewer's CreateTopics and AlterPartitionReassignments on the Kafka wire: refused with
    Kafka's authorization errors, on a connection that stays open; nothing written."""
    create = CreateTopicsRequest(
        topics=[CreateTopicsRequest.CreatableTopic(name="vw", num_partitions=1, replication_factor=1)],
        timeout_ms=5000,
        validate_only=False,
    )
    alter = AlterPartitionReassignmentsRequest(
        timeout_ms=5000,
        topics=[
            AlterPartitionReassignmentsRequest.ReassignableTopic(
                name="u",
                partitions=[
                    AlterPartitionReassignmentsRequest.ReassignableTopic.ReassignablePartition(
                        partition_index=0, replicas=[3, 4]
                    )
                ],
            )
        ],
    )
    async with kafka_wire.session(await _kafka(run), VIEWER) as client:
        for _ in range(REPEAT):
            [created] = (await client.call(create, 5)).topics
            if created.error_code != 29:  # TOPIC_AUTHORIZATION_FAILED
                return f"a viewer's CreateTopics answered {created.error_code}"
            altered = await client.call(alter, 0)
            if altered.error_code != 31:  # CLUSTER_AUTHORIZATION_FAILED
                return f"a viewer's AlterPartitionReassignments answered {altered.error_code}"
    return await _absent(run, paths.topic("vw")) or await _unmoved(run, "u")


# --- an admin -------------------------------------------------------------------------------------


def _quota(name: str) -> AlterClientQuotasRequest:
    entry = AlterClientQuotasRequest.EntryData
    return AlterClientQuotasRequest(
        entries=[
            entry(
                entity=[entry.EntityData(entity_type="user", entity_name=name)],
                ops=[entry.OpData(key="controller_mutation_rate", value=5.0, remove=False)],
            )
        ],
        validate_only=False,
    )


async def _quota_entity_too_long(run: Run) -> str | None:
    """A quota entity name that encodes past 1 MiB, and one of 5 KB: 42 on both doors."""
    for name in ("a" * OVER_1MIB, "b" * 5_000):
        for _ in range(REPEAT):
            [entry] = (await _call(run, ADMIN, _quota(name), 1)).entries
            if entry.error_code != 42:
                return f"AlterClientQuotas of a {len(name)}-byte name answered {entry.error_code}"
            body = {
                "entries": [
                    {"entity": {"user": name}, "ops": [{"key": "controller_mutation_rate", "value": 5}]}
                ]
            }
            code, resp = await _http_body(run, "/v1/quotas", ADMIN_TOKEN, json.dumps(body).encode())
            if code != 200 or [e["error_code"] for e in resp["entries"]] != [42]:
                return f"POST /v1/quotas of a {len(name)}-byte name answered {code}: {str(resp)[:300]}"
    if await run.env.zk.exists(paths.CONFIG_USERS) is not None and await run.env.zk.children(
        paths.CONFIG_USERS
    ):
        return "a refused quota was written under /config/users"
    return None


def _alter_configs(resource_type: int, name: str, key: str, value: str) -> IncrementalAlterConfigsRequest:
    resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    return IncrementalAlterConfigsRequest(
        resources=[
            resource(
                resource_type=resource_type,
                resource_name=name,
                configs=[resource.AlterableConfig(name=key, config_operation=SET, value=value)],
            )
        ],
        validate_only=False,
    )


async def _broker_abc(run: Run) -> str | None:
    """IncrementalAlterConfigs on a BROKER resource named ``abc``: 42 each time."""
    before = sorted(await run.env.zk.children(paths.CONFIG_BROKERS))
    request = _alter_configs(BROKER, "abc", "follower.replication.throttled.rate", "1000")
    async with kafka_wire.session(await _kafka(run), ADMIN) as client:
        for _ in range(REPEAT * 2):
            [answer] = (await client.call(request, 1)).responses
            if answer.error_code != 42 or "integer" not in (answer.error_message or ""):
                return f"a BROKER resource named abc answered {answer.error_code}: {answer.error_message}"
    after = sorted(await run.env.zk.children(paths.CONFIG_BROKERS))
    return None if after == before else f"broker configs written: {before} -> {after}"


def _big_replica_list() -> str:
    """A valid throttled-replicas list over 1 MiB."""
    return ",".join(f"{p}:{1_000_000 + p % 7}" for p in range(OVER_1MIB // 12))


def _create(*topics: Any) -> CreateTopicsRequest:
    return CreateTopicsRequest(topics=list(topics), timeout_ms=5000, validate_only=False)


def _new_topic(name: str, configs: dict[str, str], assignment: tuple[int, ...] | None = None) -> Any:
    topic = CreateTopicsRequest.CreatableTopic
    return topic(
        name=name,
        num_partitions=1 if assignment is None else -1,
        replication_factor=2 if assignment is None else -1,
        assignments=[]
        if assignment is None
        else [topic.CreatableReplicaAssignment(partition_index=0, broker_ids=list(assignment))],
        configs=[topic.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()],
    )


async def _config_value_over_1mib(run: Run) -> str | None:
    """A config value over 1 MiB, by IncrementalAlterConfigs and by CreateTopics: 40 each."""
    config_before = (await run.env.zk.get(paths.config_topic("t"))).data
    value = _big_replica_list()
    alter = _alter_configs(TOPIC, "t", "follower.replication.throttled.replicas", value)
    create = _create(_new_topic("c6", {"follower.replication.throttled.replicas": value}))
    async with kafka_wire.session(await _kafka(run), ADMIN) as client:
        for _ in range(REPEAT):
            [answer] = (await client.call(alter, 1)).responses
            if answer.error_code != 40:
                return f"IncrementalAlterConfigs of {len(value)} bytes answered {answer.error_code}"
            [created] = (await client.call(create, 5)).topics
            if created.error_code != 40:
                return f"CreateTopics with {len(value)} bytes of config answered {created.error_code}"
    if (await run.env.zk.get(paths.config_topic("t"))).data != config_before:
        return "a refused config was written: /config/topics/t changed"
    return await _absent(run, paths.topic("c6"), paths.config_topic("c6"))


async def _second_topic_oversized(run: Run) -> str | None:
    """CreateTopics of two topics, the second with a 1.2 MB config value: the first created
    (then 36 on each retry), the second answered 40 and not written."""
    value = _big_replica_list() + "," + _big_replica_list()[:100_000]
    request = _create(
        _new_topic("ok7", {}, (1, 2)), _new_topic("bad7", {"follower.replication.throttled.replicas": value})
    )
    async with kafka_wire.session(await _kafka(run), ADMIN) as client:
        for attempt in range(REPEAT):
            first, second = (await client.call(request, 5)).topics
            if (first.error_code, second.error_code) != (0 if attempt == 0 else 36, 40):
                return f"attempt {attempt}: answered {first.error_code}, {second.error_code}"
    run.expected[("ok7", 0)] = (1, 2)
    return await _absent(run, paths.topic("bad7"), paths.config_topic("bad7"))


BAD_CONFIGS = (
    {"no.such.config": "1"},
    {"retention.ms": "soon"},
    {"cleanup.policy": "sometimes"},
    {"min.insync.replicas": "0"},
    {"unclean.leader.election.enable": "maybe"},
)


async def _invalid_configs(run: Run) -> str | None:
    """CreateTopics with unknown config names and invalid values: 40 per topic, none written."""
    request = _create(*(_new_topic(f"bad8-{i}", c) for i, c in enumerate(BAD_CONFIGS)))
    async with kafka_wire.session(await _kafka(run), ADMIN) as client:
        for _ in range(REPEAT * 2):
            codes = [t.error_code for t in (await client.call(request, 5)).topics]
            if codes != [40] * len(BAD_CONFIGS):
                return f"CreateTopics with invalid configs answered {codes}"
    names = [
        n
        for i in range(len(BAD_CONFIGS))
        for n in (paths.topic(f"bad8-{i}"), paths.config_topic(f"bad8-{i}"))
    ]
    return await _absent(run, *names)


def _alter_wide(count: int) -> AlterPartitionReassignmentsRequest:
    topic = AlterPartitionReassignmentsRequest.ReassignableTopic
    return AlterPartitionReassignmentsRequest(
        timeout_ms=5000,
        topics=[
            topic(
                name="wide",
                partitions=[
                    topic.ReassignablePartition(partition_index=p, replicas=[1 + (p + 1) % 5])
                    for p in range(count)
                ],
            )
        ],
    )


async def _too_many_moves(run: Run) -> str | None:
    """A reassignment naming more partitions than --max-partitions-per-request: 42 for every
    one of them, on the Kafka wire and over HTTP; nothing moves."""
    count = LIMIT + 50
    async with kafka_wire.session(await _kafka(run), ADMIN) as client:
        for _ in range(REPEAT):
            response = await client.call(_alter_wide(count), 0)
            codes = {p.error_code for t in response.responses for p in t.partitions}
            if response.error_code != 0 or codes != {42}:
                return f"AlterPartitionReassignments of {count} answered {response.error_code}, {codes}"
    body = {
        "topics": [
            {
                "name": "wide",
                "partitions": [{"partition": p, "replicas": [1 + (p + 1) % 5]} for p in range(count)],
            }
        ]
    }
    for _ in range(REPEAT):
        code, resp = await _http(run, "POST", "/v1/reassignments", ADMIN_TOKEN, body)
        codes = {p["error_code"] for t in resp.get("responses", []) for p in t["partitions"]}
        if code != 200 or codes != {42}:
            return f"POST /v1/reassignments of {count} answered {code}: {codes}"
    return await _unmoved(run, "wide") or await _absent(run, paths.REASSIGN_PARTITIONS)


async def _elect_leaders(run: Run) -> str | None:
    """ElectLeaders naming more partitions than --max-partitions-per-request (42 each) and
    unknown partitions (3 each)."""
    tps = ElectLeadersRequest.TopicPartitions
    too_many = ElectLeadersRequest(
        election_type=0,
        topic_partitions=[tps(topic="wide", partitions=list(range(LIMIT + 50)))],
        timeout_ms=5000,
    )
    unknown = ElectLeadersRequest(
        election_type=0, topic_partitions=[tps(topic="nope", partitions=[0, 1, 2])], timeout_ms=5000
    )
    async with kafka_wire.session(await _kafka(run), ADMIN) as client:
        for _ in range(REPEAT):
            for request, want in ((too_many, 42), (unknown, 3)):
                response = await client.call(request, 1)
                codes = {p.error_code for t in response.replica_election_results for p in t.partition_result}
                if codes != {want}:
                    return f"ElectLeaders answered {response.error_code}, {codes}; expected {want}"
    return await _absent(run, paths.PREFERRED_REPLICA_ELECTION, paths.topic("nope"))


async def _delete_unknown_ids(run: Run) -> str | None:
    """DeleteTopics v6 by 100 unknown topic ids: 100 UNKNOWN_TOPIC_ID with each id."""
    ids = [uuid.uuid4() for _ in range(100)]
    state = DeleteTopicsRequest.DeleteTopicState
    request = DeleteTopicsRequest(topics=[state(name=None, topic_id=i) for i in ids], timeout_ms=5000)
    async with kafka_wire.session(await _kafka(run), ADMIN) as client:
        for _ in range(REPEAT):
            results = (await client.call(request, 6)).responses
            got = [(r.error_code, r.topic_id) for r in results]
            if got != [(100, i) for i in ids]:
                return f"DeleteTopics by unknown ids answered {got[:3]}"
    topics = await run.env.zk.children(paths.BROKER_TOPICS)
    return await _absent(run, *(paths.delete_topic(t) for t in topics))


async def _sequenced_too_many(run: Run) -> str | None:
    """Sequenced requests (KIP-236) naming more partitions than --max-partitions-per-request:
    reported and deleted without effect."""
    moves = {("wide", p): (1 + (p + 1) % 5,) for p in range(LIMIT + 50)}
    for _ in range(3):
        await run.env.zk.create(
            paths.reassignment_request("request_"),
            admin_codec.encode_reassignment_request(admin_codec.ReassignmentRequest(moves)),
            sequential=True,
        )

    async def deleted() -> bool:
        return not await run.env.zk.children(paths.REASSIGNMENT_REQUESTS)

    if not await eventually(deleted, 20.0, 0.2, or_none=True):
        return "the sequenced requests were not deleted"
    return await _unmoved(run, "wide")


# --- an unauthenticated client --------------------------------------------------------------------


async def _served(address: str) -> str | None:
    """A real (authenticated) client is answered within 2 s."""
    try:
        async with asyncio.timeout(2.0):
            async with kafka_wire.session(address, VIEWER) as client:
                if (await client.call(ApiVersionsRequest(), 0)).error_code != 0:
                    return "ApiVersions answered an error"
    except (TimeoutError, ConnectionError, OSError) as e:
        return f"a real client was not served: {e!r}"
    return None


async def _big_frames_before_sasl(run: Run) -> str | None:
    """Frames over 512 KiB before SASL: the connection closed (as Kafka does); others served."""
    address = await _kafka(run)
    for _ in range(REPEAT * 2):
        big = await kafka_wire.announce(address, 600 * 1024, b"\0" * 1024)
        try:
            if not await big.closed_by_peer():
                return "a 600 KiB frame before SASL was not closed"
        finally:
            await big.close()
        if (problem := await _served(address)) is not None:
            return problem
    return None


async def _idle_announced_frames(run: Run) -> str | None:
    """Four sockets announcing 10 MiB frames and sending nothing, unauthenticated and then
    authenticated (admin): a real client keeps being served at once."""
    address = await _kafka(run)
    for _ in range(REPEAT):
        idle = [await kafka_wire.announce(address, 10 * 1024 * 1024) for _ in range(4)]
        authed = [await kafka_wire.authenticated(address, ADMIN) for _ in range(4)]
        try:
            for c in authed:
                c.writer.write((10 * 1024 * 1024).to_bytes(4, "big"))
                await c.writer.drain()
            await asyncio.sleep(0.2)
            if (problem := await _served(address)) is not None:
                return problem
        finally:
            for c in [*idle, *authed]:
                await c.close()
    return None


async def _connection_flood(run: Run) -> str | None:
    """More connections than --kafka-max-connections-per-ip (12): the extra ones closed as
    Kafka does; once they are gone, clients are served."""
    address = await _kafka(run)
    for _ in range(REPEAT):
        flood = [await kafka_wire.connect(address) for _ in range(20)]
        try:
            closed = await asyncio.gather(*(c.closed_by_peer(3.0) for c in flood))
            if not 6 <= sum(closed) <= 8:
                return f"{sum(closed)} of 20 connections closed with a cap of 12"
        finally:
            for c in flood:
                await c.close()

        async def served() -> bool:
            return await _served(address) is None

        if not await eventually(served, 10.0, 0.2, or_none=True):
            return "no client served after the flood"
    return None


async def _http_unauthenticated(run: Run) -> str | None:
    """No token, a wrong token: 401; a body over 10 MiB: 413; nothing written."""
    body = {"topics": [{"name": "u", "partitions": [{"partition": 0, "replicas": [3, 4]}]}]}
    huge = json.dumps({"topics": [{"name": "u" * (11 * 1024 * 1024), "partitions": []}]}).encode()
    for _ in range(REPEAT):
        for method, path, token, data, want in (
            ("GET", "/v1/status", None, None, 401),
            ("GET", "/v1/reassignments", "wrong", None, 401),
            ("POST", "/v1/reassignments", None, body, 401),
            ("POST", "/v1/reassignments", "wrong", body, 401),
        ):
            code, _ = await _http(run, method, path, token, data)
            if code != want:
                return f"{method} {path} (token {token!r}) answered {code}, expected {want}"
        code, _ = await _http_body(run, "/v1/reassignments", ADMIN_TOKEN, huge)
        if code != 413:
            return f"a body of {len(huge)} bytes answered {code}, expected 413"
    return await _unmoved(run, "u")


# --- another ZooKeeper principal ------------------------------------------------------------------


async def _foreign_config_setup(run: Run) -> str | None:
    zk = run.env.zk
    await make_topic(zk, "cf", {0: (1, 2)}, config={"retention.ms": "100000"})
    if not await wait_online(zk, [("cf", 0)]):
        return "topic cf did not come online"
    run.expected[("cf", 0)] = (1, 2)
    await own(run.env.zk_connect, paths.config_topic("cf"))
    return None


async def _foreign_config(run: Run) -> str | None:
    """Another principal owns /config/topics/cf: the controller's write meets NOAUTH, the request
    is answered an error (the connection open), reported, the config unchanged."""
    before = (await run.env.zk.get(paths.config_topic("cf"))).data
    request = _alter_configs(TOPIC, "cf", "retention.ms", "200000")
    async with kafka_wire.session(await _kafka(run), ADMIN) as client:
        for _ in range(REPEAT):
            [answer] = (await client.call(request, 1)).responses
            if answer.error_code == 0 or not answer.error_message:
                return f"a config write meeting NOAUTH answered {answer.error_code}: {answer.error_message}"
    if (await run.env.zk.get(paths.config_topic("cf"))).data != before:
        return "/config/topics/cf changed"
    return None


async def _foreign_config_gone(run: Run) -> str | None:
    await disown(run.env.zk_connect, paths.config_topic("cf"))
    return None


async def _foreign_admin_znode(run: Run) -> str | None:
    """Another principal writes /admin/reassign_partitions (a legacy request) it owns: readable,
    not writable by the controller (which may delete it: that is its parent's ACL). The moves
    are taken and completed, the znode deleted."""
    zk = run.env.zk
    await make_topic(zk, "la", {0: (1, 2), 1: (2, 1)})
    if not await wait_online(zk, [("la", 0), ("la", 1)]):
        return "topic la did not come online"
    entries = (
        admin_codec.LegacyReassignmentEntry("la", 0, (2, 3)),
        admin_codec.LegacyReassignmentEntry("la", 1, (3, 2)),
    )
    data = admin_codec.encode_legacy_reassignment(entries).decode()
    await own(run.env.zk_connect, paths.REASSIGN_PARTITIONS, create=True, data=data.replace(" ", ""))
    run.expected.update({("la", 0): (2, 3), ("la", 1): (3, 2)})
    return None


async def _foreign_admin_gone(run: Run) -> str | None:
    if await run.env.zk.exists(paths.REASSIGN_PARTITIONS) is not None:
        await disown(run.env.zk_connect, paths.REASSIGN_PARTITIONS)
    return None


async def _malformed_admin_znodes(run: Run) -> str | None:
    """/admin/reassign_partitions and /admin/preferred_replica_election written malformed and
    rewritten (each a watch event), or written again once the controller deleted one: skipped
    and reported, never a failover."""
    zk = run.env.zk
    for path in (paths.REASSIGN_PARTITIONS, paths.PREFERRED_REPLICA_ELECTION):
        for i in range(REPEAT):
            data = b'{"version":1,"partitions":[{"topic":%d}' % i
            try:
                await zk.set(path, data, -1)
            except NoNodeError:
                with contextlib.suppress(NodeExistsError):
                    await zk.create(path, data)
    return None


async def _malformed_gone(run: Run) -> str | None:
    for path in (paths.REASSIGN_PARTITIONS, paths.PREFERRED_REPLICA_ELECTION):
        with contextlib.suppress(NoNodeError):
            await run.env.zk.delete(path, -1)
    return None


def _many(flag: str, value: int) -> tuple[str, ...]:
    return (flag, str(value))


PER_REQUEST = _many("--max-partitions-per-request", LIMIT)

CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case("viewer_metadata_repeated_topic", _metadata_repeated_topic, (), setup=_wide),
        Case("viewer_metadata_all_topics", _metadata_all_topics, (), setup=_wide),
        Case("viewer_http_floods", _http_floods, (), setup=_wide),
        Case("viewer_writes_refused", _viewer_writes, ()),
        Case("admin_quota_entity_too_long", _quota_entity_too_long, ()),
        Case("admin_broker_resource_abc", _broker_abc, ()),
        Case("admin_config_value_over_1mib", _config_value_over_1mib, ()),
        Case("admin_second_topic_oversized", _second_topic_oversized, ()),
        Case("admin_invalid_topic_configs", _invalid_configs, ()),
        Case("admin_too_many_moves", _too_many_moves, (), setup=_wide, flags=PER_REQUEST),
        Case("admin_elect_leaders_refused", _elect_leaders, (), setup=_wide, flags=PER_REQUEST),
        Case("admin_delete_unknown_topic_ids", _delete_unknown_ids, ()),
        Case(
            "sequenced_request_too_many",
            _sequenced_too_many,
            ("/admin/reassignment_requests", "--max-partitions-per-request"),
            setup=_wide,
            flags=PER_REQUEST,
        ),
        Case("unauthenticated_big_frames", _big_frames_before_sasl, ()),
        Case("unauthenticated_idle_frames", _idle_announced_frames, ()),
        Case(
            "unauthenticated_connection_flood",
            _connection_flood,
            (),
            flags=_many("--kafka-max-connections-per-ip", 12),
        ),
        Case("unauthenticated_http", _http_unauthenticated, ()),
        POISON_CASES["foreign_principal"],
        Case(
            "foreign_principal_topic_config",
            _foreign_config,
            ("/config/topics/cf", "NOAUTH"),
            setup=_foreign_config_setup,
            cleanup=_foreign_config_gone,
        ),
        Case(
            "foreign_principal_admin_znode",
            _foreign_admin_znode,
            (),
            cleanup=_foreign_admin_gone,
        ),
        Case(
            "malformed_admin_znodes",
            _malformed_admin_znodes,
            (paths.REASSIGN_PARTITIONS, paths.PREFERRED_REPLICA_ELECTION),
            cleanup=_malformed_gone,
        ),
    )
}


async def adversarial(env: Env, seed: int, case: str | None = None) -> Outcome:
    """The shared input scenario (tests/faults/inputs.py) with one case, ``case`` or the seed's,
    against controllers with a tokens file and a Kafka listener each."""
    chosen = CASES[case] if case is not None else list(CASES.values())[seed % len(CASES)]
    return await input_scenario(env, "adversarial", seed, chosen, Doors(env))
