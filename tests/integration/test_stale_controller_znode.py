"""A ``/controller`` that names this instance but is held by another session — this instance's
own, from before its session expired and a new one replaced it — is followed until it goes, and
read again after a session timeout even without its deletion's watch: the instance then wins."""

from __future__ import annotations

import time

import pytest

from reassignd.testing.controller import in_process_controller
from reassignd.testing.polling import eventually
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.values import ZkSettings

pytestmark = pytest.mark.timeout(120)


async def _true(value: object) -> bool:
    return bool(value)


async def test_a_stale_controller_znode_naming_this_instance_is_read_again_until_it_goes(
    zk_connect: str, zk: ZkClient
) -> None:
    former = ZkClient(ZkSettings(zk_connect, session_timeout_s=6.0, request_timeout_s=10.0))
    await former.start()
    closed = False
    try:
        info = codec.ControllerInfo(9000, int(time.time() * 1000), None, None)
        await former.create(paths.CONTROLLER, codec.encode_controller(info), ephemeral=True)
        async with in_process_controller(zk_connect, session_timeout_s=2.0) as c:
            controller = c.controller
            await eventually(lambda: _true(controller.term.recheck_pending), 10.0, what="a re-read armed")
            assert not controller.active  # it follows the former session's znode
            # the re-read comes by itself, again and again, while the znode stays
            await eventually(lambda: _true(controller.term.rechecks >= 2), 10.0, what="two re-reads")
            await eventually(lambda: _true(controller.term.recheck_pending), 10.0, what="re-armed")
            assert not controller.active
            await former.close()  # the former session ends: its /controller goes
            closed = True
            await c.until_active(timeout_s=30.0)
            stat = (await zk.get(paths.CONTROLLER)).stat
            assert stat.ephemeral_owner == controller.zk.session_id
    finally:
        if not closed:
            await former.close()
