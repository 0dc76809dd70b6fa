"""KIP-236's client verbs, written straight into ZooKeeper (Kafka's ZooKeeper layout; docs/design.md, "KIP-236").

- ``--rollback``: create ``/admin/reassign_cancel``; the controller rolls every pending legacy
  reassignment back to its ``original_replicas`` and starts nothing new while the znode exists.
- ``--remove-cancel``: delete it (the controller never does).
- ``--additional``: submit a plan through the legacy znode when there is none, else through
  ``/admin/reassign_partitions_extra`` (one extra batch at a time: the controller deletes it once
  merged). Each entry carries the partition's replicas before the move as ``original_replicas``.

Refusals are :class:`AdminError` (one line on stderr, exit 1); nothing is written then.
"""

from __future__ import annotations

from typing import TextIO

from reassignd.admin import report
from reassignd.admin.plan import legacy_entries
from reassignd.admin.settings import ReassignSettings, Verb
from reassignd.admin.zk_session import open_session
from reassignd.api_client.errors import ClientError
from reassignd.plan_format import Plan, ids_text, tp_text
from reassignd.topic_partition import Replicas, TopicPartition
from reassignd.zk import admin_codec, codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import NodeExistsError, NoNodeError, ZkError


class AdminError(ClientError):
    """A refusal of a KIP-236 verb (one line on stderr, exit 1): nothing was written."""


CANCEL_IN_PLACE = (
    f"While {paths.REASSIGN_CANCEL} exists the controller starts no new reassignment "
    "(error 10001 REASSIGNMENT_CANCEL_IN_PLACE); remove it with --remove-cancel."
)


def _say(out: TextIO, *lines: str) -> None:
    for line in lines:
        print(line, file=out)
    out.flush()


async def _legacy(zk: ZkClient, path: str) -> tuple[admin_codec.LegacyReassignmentEntry, ...] | None:
    znode = await zk.get_or_none(path)
    if znode is None:
        return None
    try:
        return admin_codec.decode_legacy_reassignment(znode.data)
    except codec.CodecError as e:
        raise AdminError(f"{path} cannot be decoded: {e.reason}") from None


async def rollback(zk: ZkClient, out: TextIO) -> int:
    if await zk.exists(paths.REASSIGN_CANCEL) is not None:
        raise AdminError(
            f"a rollback is already in place ({paths.REASSIGN_CANCEL} exists); "
            "remove it with --remove-cancel before asking for another"
        )
    pending = await _legacy(zk, paths.REASSIGN_PARTITIONS) or ()
    _say(out, *report.pending_lines(pending, paths.REASSIGN_PARTITIONS))
    try:
        await zk.create(paths.REASSIGN_CANCEL, make_parents=True)
    except NodeExistsError:
        raise AdminError(f"a rollback is already in place ({paths.REASSIGN_CANCEL} exists)") from None
    _say(out, "Successfully submitted cancellation of reassignments.", CANCEL_IN_PLACE)
    extra = await _legacy(zk, paths.REASSIGN_PARTITIONS_EXTRA)
    if extra:
        _say(
            out,
            f"Note: {paths.REASSIGN_PARTITIONS_EXTRA} holds {len(extra)} reassignment(s) not merged "
            "yet; they are not rolled back and start after --remove-cancel.",
        )
    return 0


async def remove_cancel(zk: ZkClient, out: TextIO) -> int:
    try:
        await zk.delete(paths.REASSIGN_CANCEL)
    except NoNodeError:
        _say(out, f"There is no rollback in place: {paths.REASSIGN_CANCEL} does not exist.")
        return 0
    _say(out, f"Successfully removed the znode {paths.REASSIGN_CANCEL}.")
    return 0


async def _original_replicas(zk: ZkClient, plan: Plan) -> dict[TopicPartition, Replicas]:
    """RS − AR from the topic znodes: each partition's replicas before any move in flight."""
    topics = plan.topics
    znodes = await zk.get_many([paths.topic(t) for t in topics])
    wanted = set(plan.partitions)
    found: dict[TopicPartition, Replicas] = {}
    for topic, znode in zip(topics, znodes, strict=True):
        if znode is None:
            continue
        try:
            decoded = codec.decode_topic(znode.data)
        except codec.CodecError as e:
            raise AdminError(f"{paths.topic(topic)} cannot be decoded: {e.reason}") from None
        for p, replicas in decoded.partitions.items():
            if (topic, p) in wanted:
                adding = decoded.adding.get(p, ())
                found[(topic, p)] = tuple(r for r in replicas if r not in adding)
    return found


async def _registered_brokers(zk: ZkClient) -> set[int]:
    try:
        children = await zk.children(paths.BROKER_IDS)
    except NoNodeError:
        return set()
    return {int(c) for c in children if c.isdigit()}


def _extra_not_merged() -> AdminError:
    return AdminError(
        f"{paths.REASSIGN_PARTITIONS_EXTRA} already exists: a previous extra batch is not merged yet "
        "(the controller deletes the znode once merged); try again then"
    )


async def additional(zk: ZkClient, plan: Plan, out: TextIO) -> int:
    if await zk.exists(paths.REASSIGN_CANCEL) is not None:
        raise AdminError(
            f"a rollback is in place ({paths.REASSIGN_CANCEL} exists): the controller would refuse "
            "the plan; remove it with --remove-cancel first"
        )
    if await zk.exists(paths.REASSIGN_PARTITIONS) and await zk.exists(paths.REASSIGN_PARTITIONS_EXTRA):
        raise _extra_not_merged()
    # As Kafka's tool did on this path: the controller does not validate the znode's entries.
    original = await _original_replicas(zk, plan)
    if missing := [tp for tp in plan.partitions if tp not in original]:
        raise AdminError(
            "The proposed assignment contains non-existent partitions: "
            + ",".join(tp_text(tp) for tp in missing)
        )
    brokers = await _registered_brokers(zk)
    if unknown := sorted({r for replicas in plan.targets.values() for r in replicas} - brokers):
        raise AdminError(f"The proposed assignment contains non-existent brokerIDs: {ids_text(unknown)}")
    _say(out, report.rollback_text(original))
    data = admin_codec.encode_legacy_reassignment(legacy_entries(plan, original))
    path = paths.REASSIGN_PARTITIONS
    try:
        await zk.create(path, data, make_parents=True)
    except NodeExistsError:
        path = paths.REASSIGN_PARTITIONS_EXTRA
        try:
            await zk.create(path, data, make_parents=True)
        except NodeExistsError:
            raise _extra_not_merged() from None
    _say(out, report.submitted_line(plan.partitions, path))
    return 0


async def run_znode_verb(settings: ReassignSettings, out: TextIO) -> int:
    assert settings.zk_connect is not None
    zk = await open_session(settings.zk_security, settings.zk_connect, settings.request_timeout_s, AdminError)
    try:
        match settings.verb:
            case Verb.ROLLBACK:
                return await rollback(zk, out)
            case Verb.REMOVE_CANCEL:
                return await remove_cancel(zk, out)
            case Verb.ADDITIONAL:
                assert settings.plan is not None
                return await additional(zk, settings.plan, out)
    except ZkError as e:
        raise AdminError(f"ZooKeeper: {e}") from None
    finally:
        await zk.close()
    raise AssertionError(f"{settings.verb.flag} is not a ZooKeeper verb")
