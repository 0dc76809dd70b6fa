"""The agent's registration znode ``/brokers/ids/<id>`` (ephemeral, Kafka v5 JSON).

Broker epoch = the znode's czxid. A registration left by a previous process of the same id (killed,
its session not yet expired) is waited out, like a broker restarting before its old session ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from reassignd.zk import paths
from reassignd.zk.client import ZkClient
from reassignd.zk.codec import BrokerRegistration, Endpoint, encode_broker
from reassignd.zk.errors import ConnectionLostError, NodeExistsError, ZkTimeoutError

POLL_S = 0.2


class BrokerIdInUse(RuntimeError):
    """Another live session holds ``/brokers/ids/<id>`` beyond the wait."""


def registration(
    broker_id: int, host: str, port: int, rack: str | None, timestamp_ms: int
) -> BrokerRegistration:
    """PLAINTEXT and CONTROL share the agent's one HTTP port."""
    return BrokerRegistration(
        broker_id=broker_id,
        host=host,
        port=port,
        endpoints=(Endpoint("PLAINTEXT", host, port), Endpoint("CONTROL", host, port)),
        rack=rack,
        timestamp_ms=timestamp_ms,
    )


async def register(zk: ZkClient, reg: BrokerRegistration, wait_s: float) -> int:
    """Create the ephemeral registration and return its czxid (the broker epoch).

    Raises BrokerIdInUse when another session still holds the id after ``wait_s``; ZkError on
    ZooKeeper failures.
    """
    log = logging.getLogger(f"reassignd.broker.{reg.broker_id}")
    path = paths.broker(reg.broker_id)
    data = encode_broker(reg)
    deadline = time.monotonic() + wait_s
    warned = False
    while True:
        try:
            with contextlib.suppress(NodeExistsError):  # ours from before a lost reply, or another's
                await zk.create(path, data, ephemeral=True, make_parents=True)
            stat = await zk.exists(path)
        except (ConnectionLostError, ZkTimeoutError) as e:
            log.warning("registering %s: %s; retrying", path, e)
            await asyncio.sleep(POLL_S)
            continue
        if stat is not None and stat.ephemeral_owner == zk.session_id:
            return stat.czxid
        if stat is not None:
            if time.monotonic() > deadline:
                raise BrokerIdInUse(f"broker id {reg.broker_id} is registered by another session ({path})")
            if not warned:
                log.warning("%s is held by another session; waiting for it to expire", path)
                warned = True
        await asyncio.sleep(POLL_S)
