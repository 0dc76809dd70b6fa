"""Controller election and the fencing token (Kafka's /controller and /controller_epoch).

Read ``/controller_epoch`` (value E, version V); one multi creates the ephemeral ``/controller``
and sets the epoch to E+1 expecting V. The new version of ``/controller_epoch`` is the fencing
token every later write checks.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import BadVersionError, MultiFailedError, NodeExistsError, NoNodeError
from reassignd.zk.values import Create, Delete, Fence, SetData, Stat

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Won:
    epoch: int
    fence: Fence


async def read_epoch(zk: ZkClient) -> tuple[int, int]:
    """The controller epoch and its znode version, creating ``"0"`` if missing."""
    znode = await zk.get_or_none(paths.CONTROLLER_EPOCH)
    if znode is None:
        with contextlib.suppress(NodeExistsError):
            await zk.create(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(0))
        znode = await zk.get(paths.CONTROLLER_EPOCH)
    return codec.decode_controller_epoch(znode.data), znode.stat.version


async def try_elect(
    zk: ZkClient,
    controller_id: int,
    http_url: str | None,
    kafka_address: str | None = None,
    *,
    now_ms: int,
) -> Won | None:
    epoch, version = await read_epoch(zk)
    info = codec.ControllerInfo(controller_id, now_ms, http_url, kafka_address)
    try:
        results = await zk.multi(
            [
                Create(paths.CONTROLLER, codec.encode_controller(info), ephemeral=True),
                SetData(paths.CONTROLLER_EPOCH, codec.encode_controller_epoch(epoch + 1), version),
            ]
        )
    except MultiFailedError as e:
        # A retried request may have succeeded already: it is ours if /controller names us
        # (in this session) and the epoch is E+1.
        active = await zk.get_or_none(paths.CONTROLLER)
        now_epoch, now_version = await read_epoch(zk)
        if (
            active is not None
            and active.stat.ephemeral_owner == zk.session_id
            and codec.decode_controller(active.data).broker_id == controller_id
            and now_epoch == epoch + 1
        ):
            return Won(now_epoch, Fence(paths.CONTROLLER_EPOCH, now_version))
        log.info("lost the controller election (%s)", e.cause)
        return None
    stat = results[1]
    assert isinstance(stat, Stat)
    return Won(epoch + 1, Fence(paths.CONTROLLER_EPOCH, stat.version))


async def give_up(zk: ZkClient, fence: Fence | None) -> None:
    """Delete ``/controller`` if this instance is still the fenced winner (Kafka's
    triggerControllerMove), so every instance runs for election again. Raises
    ``NotController`` when another controller won meanwhile (nothing is deleted)."""
    if fence is None:
        return
    try:
        await zk.fenced_multi(fence, [Delete(paths.CONTROLLER)])
    except MultiFailedError as e:
        if not isinstance(e.cause, NoNodeError):
            raise


async def delete_own(zk: ZkClient, version: int) -> None:
    """Delete a ``/controller`` this session owns at ``version`` (nothing if it changed)."""
    with contextlib.suppress(NoNodeError, BadVersionError):
        await zk.delete(paths.CONTROLLER, version)
