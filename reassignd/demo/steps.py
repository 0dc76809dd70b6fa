"""The demo's story, step by step, against a running :class:`LocalCluster`: create a topic big
enough that moves take seconds, drain a broker while printing progress, cancel a move half-way,
and (``--keep-running``) watch whatever happens next.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from reassignd.broker.sim_config import INITIAL_BYTES, REPLICATION_BYTES_PER_S
from reassignd.contracts.cluster import Brokers, Partition, Status, Topic, Topics
from reassignd.contracts.reassignments import (
    AlterReassignmentsResponse,
    ListReassignmentsResponse,
    Reassignment,
)
from reassignd.contracts.requests import KafkaAlterReassignments
from reassignd.demo.cluster import DemoFailed, LocalCluster, say
from reassignd.demo.options import DemoOptions
from reassignd.demo.plan import (
    MiB,
    alter_body,
    assignment_of,
    drain_targets,
    fraction_done,
    ids,
    listed,
    partition_errors,
    racks_of,
    replacement,
    replica_load,
    round_robin_assignment,
)
from reassignd.demo.text import move, render, render_load, render_progress, render_topic
from reassignd.topic_partition import TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import NodeExistsError

HALF_WAY = 0.45  # cancel once this much of the move is copied


def now() -> str:
    return time.strftime("%H:%M:%S")


async def put_config(zk: ZkClient, path: str, changes: Mapping[str, str]) -> None:
    """Add ``changes`` to an entity config znode (created if missing). The agents watch these
    znodes themselves, so no ``/config/changes`` notification is needed."""
    znode = await zk.get_or_none(path)
    if znode is None:
        await zk.create(path, admin_codec.encode_entity_config(changes), make_parents=True)
    else:
        merged = {**admin_codec.decode_entity_config(znode.data), **changes}
        await zk.set(path, admin_codec.encode_entity_config(merged), znode.stat.version)


class Steps:
    def __init__(self, cluster: LocalCluster, options: DemoOptions) -> None:
        self.cluster = cluster
        self.options = options
        self.topic_path = f"/v1/topics/{options.topic}"

    async def create_topic(self, live_brokers: Sequence[int]) -> None:
        """Simulation configs, then ``/brokers/topics/<topic>`` written directly, as Kafka's tools
        did before the admin API; waits until every partition has a leader."""
        o = self.options
        assignment = round_robin_assignment(
            live_brokers, o.partitions, min(o.replication_factor, len(live_brokers))
        )
        async with self.cluster.zk() as zk:
            rate = str(o.replication_mib_s * MiB)
            await put_config(zk, paths.config_broker(None), {REPLICATION_BYTES_PER_S: rate})
            await put_config(zk, paths.config_topic(o.topic), {INITIAL_BYTES: str(o.partition_mib * MiB)})
            znode = codec.TopicZnode(partitions=assignment, topic_id=codec.new_uuid_base64())
            try:
                await zk.create(paths.topic(o.topic), codec.encode_topic(znode), make_parents=True)
            except NodeExistsError:
                say(f"topic {o.topic} exists already")
            else:
                say(
                    f"created topic {o.topic}: {o.partitions} partitions of {o.partition_mib} MiB, replication"
                    f" factor {len(assignment[0])}; every broker replicates at {o.replication_mib_s} MiB/s"
                )
        deadline = time.monotonic() + o.ready_timeout_s
        while True:
            topic = await self.cluster.maybe(self.topic_path, Topic)
            if topic is not None and topic.partitions and all(p.leader >= 0 for p in topic.partitions):
                break
            if time.monotonic() > deadline:
                raise DemoFailed(
                    f"{o.topic} has no leader for every partition within {o.ready_timeout_s:g} s"
                )
            await self.cluster.pause(0.25)
        status = await self.cluster.typed("GET", "/v1/status", Status)
        say(render(now(), status, [topic]))

    async def drain(self) -> None:
        """Move every replica off broker ``drain``, printing progress until nothing moves."""
        o = self.options
        topic = await self.cluster.typed("GET", self.topic_path, Topic)
        racks = racks_of(await self.cluster.typed("GET", "/v1/brokers", Brokers))
        try:
            targets = drain_targets(assignment_of(topic), o.drain, racks)
        except ValueError as e:
            raise DemoFailed(f"cannot drain broker {o.drain}: {e}") from None
        say(
            f"\n== draining broker {o.drain} (rack {racks.get(o.drain)}): POST /v1/reassignments\n"
            "each replica goes to a broker on a rack its partition does not use yet, least loaded first"
        )
        before = assignment_of(topic)
        for p, target in targets.items():
            new = next(b for b in target if b not in before[p])
            say(f"  {o.topic}-{p}  {move(before[p], target)}  (broker {new}, rack {racks.get(new)})")
        await self.alter(alter_body(o.topic, targets))
        started = time.monotonic()
        while await self.show_progress():
            self.check_timeout(started, f"draining broker {o.drain}")
            await self.cluster.pause(o.interval_s)
        say(f"all moves done in {time.monotonic() - started:.1f} s; the assignment now:")
        topic = await self.cluster.typed("GET", self.topic_path, Topic)
        say("\n".join([*render_topic(topic), render_load(topic, sorted(racks))]))

    async def cancel_half_way(self) -> None:
        """Move one replica of a partition, cancel when about half of it is copied, and check the
        partition is back on its original replicas and the partial copy is gone."""
        o = self.options
        topic = await self.cluster.typed("GET", self.topic_path, Topic)
        racks = racks_of(await self.cluster.typed("GET", "/v1/brokers", Brokers))
        assignment = assignment_of(topic)
        p = min(assignment)
        original = assignment[p]
        leaving = original[-1]  # a follower: the leader stays
        try:
            new = replacement(original, leaving, racks, replica_load(assignment), exclude=[o.drain])
        except ValueError as e:
            raise DemoFailed(f"cannot move {o.topic}-{p}: {e}") from None
        target = [new if b == leaving else b for b in original]
        name = f"{o.topic}-{p}"
        say(f"\n== moving {name} {move(original, target)}, to cancel it half-way")
        await self.alter(alter_body(o.topic, {p: target}))
        started = time.monotonic()
        while True:
            entry = next((e for tp, e in await self.show_progress() if tp[1] == p), None)
            if entry is None:
                say(f"{name} finished before it could be cancelled")
                return
            done = fraction_done(entry.progress)
            if done is not None and done >= HALF_WAY:
                break
            self.check_timeout(started, f"moving {name}")
            await self.cluster.pause(min(o.interval_s, 0.5))
        say(f"DELETE /v1/reassignments/{o.topic}/{p} (mode cancel: back to the original replicas)")
        path = f"/v1/reassignments/{o.topic}/{p}"
        answer = await self.cluster.typed("DELETE", path, AlterReassignmentsResponse)
        result = answer.responses[0].partitions[0]
        if result.error_code != 0:
            say(f"{name}: {result.error_name} ({result.error_message})")
            return
        while True:
            state = await self.partition(p)
            if not state.adding_replicas and not state.removing_replicas and new not in state.replicas:
                break
            self.check_timeout(started, f"cancelling {name}")
            await self.cluster.pause(0.25)
        if sorted(state.replicas) != sorted(original):
            raise DemoFailed(f"{name} went to {ids(state.replicas)} instead of back to {ids(original)}")
        say(
            f"{name} is back on its original replicas {ids(state.replicas)}"
            f" (leader {state.leader}, isr {ids(state.isr)})"
        )
        while await self.copy_on(new, p) is not None:
            self.check_timeout(started, f"broker {new} deleting its copy of {name}")
            await self.cluster.pause(0.25)
        say(f"broker {new} deleted its partial copy of {name}")

    async def watch(self) -> None:
        """Until stopped: progress of whatever moves, and the whole state whenever that changes."""
        c = self.cluster
        say(
            "\nthe cluster keeps running (Ctrl-C stops it):\n"
            f"  HTTP API and status page  {c.url}  (the README's curl examples: URL={c.url})\n"
            f"  Kafka listener            {c.kafka_address}  (Kafka's tools: --bootstrap-server {c.kafka_address})\n"
            f"  ZooKeeper                 {c.zookeeper.connect}\n"
            f"  logs                      {c.log_dir}"
        )
        moving: list[tuple[str, int]] | None = None
        while True:
            self.cluster.check_children()
            listing = await self.cluster.maybe("/v1/reassignments", ListReassignmentsResponse)
            entries = [] if listing is None else listed(listing)
            now_moving = [tp for tp, _ in entries]
            if now_moving != moving:
                status = await self.cluster.maybe("/v1/status", Status)
                topics = await self.all_topics()
                if status is not None:
                    say(render(now(), status, topics))
                moving = now_moving
            if entries:
                say("\n".join(render_progress(now(), entries)))
            await self.cluster.pause(self.options.interval_s)

    # helpers

    async def alter(self, body: KafkaAlterReassignments) -> None:
        answer = await self.cluster.typed("POST", "/v1/reassignments", AlterReassignmentsResponse, body)
        errors = partition_errors(answer)
        if errors:
            raise DemoFailed("reassignment refused: " + "; ".join(errors))

    async def show_progress(self) -> list[tuple[TopicPartition, Reassignment]]:
        """Print the progress of the demo topic's moves; returns them (none: [] and no print)."""
        self.cluster.check_children()
        path = f"/v1/reassignments?topic={self.options.topic}"
        entries = listed(await self.cluster.typed("GET", path, ListReassignmentsResponse))
        if entries:
            say("\n".join(render_progress(now(), entries)))
        return entries

    async def partition(self, p: int) -> Partition:
        topic = await self.cluster.typed("GET", self.topic_path, Topic)
        return next(q for q in topic.partitions if q.partition == p)

    async def all_topics(self) -> list[Topic]:
        names = await self.cluster.maybe("/v1/topics", Topics)
        topics = []
        for t in [] if names is None else names.topics:
            topic = await self.cluster.maybe(f"/v1/topics/{t.name}", Topic)
            if topic is not None:
                topics.append(topic)
        return topics

    async def copy_on(self, broker: int, p: int) -> dict[str, Any] | None:
        """The replica of the demo topic's partition ``p`` that ``broker``'s agent reports, if any
        (its ``GET /replicas``, on the CONTROL endpoint it registered)."""
        brokers = await self.cluster.typed("GET", "/v1/brokers", Brokers)
        b = next((b for b in brokers.brokers if b.id == broker), None)
        control = next((e for e in b.endpoints if e.startswith("CONTROL://")), None) if b else None
        if control is None:
            return None
        report = await self.cluster.call("GET", "http://" + control.removeprefix("CONTROL://") + "/replicas")
        replicas: list[dict[str, Any]] = report.get("replicas", [])
        return next((r for r in replicas if (r["topic"], r["partition"]) == (self.options.topic, p)), None)

    def check_timeout(self, started: float, what: str) -> None:
        if time.monotonic() - started > self.options.move_timeout_s:
            raise DemoFailed(f"{what} took over {self.options.move_timeout_s:g} s")
