"""A stand-in for the controller's view behind the HTTP app (a pure-logic seam)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from reassignd.controller.model.snapshot import (
    ActiveControllerAddress,
    BrokerView,
    ClusterSnapshot,
    PartitionView,
    Problem,
    TopicView,
)
from reassignd.testing.fake_view import FakeView as SharedFakeView
from reassignd.zk.values import ZkAccess

ORDERS = TopicView(
    name="orders",
    topic_id="kqP0cOvlQ5Gx0r5VxD1x3g",
    partitions=(
        PartitionView(0, (4, 5, 6, 1, 2, 3), 1, 4, (1, 2, 3), (4, 5, 6), (1, 2, 3)),
        PartitionView(1, (2, 3, 1), 2, 0, (2, 3, 1), (), ()),
    ),
)


AUDIT = TopicView(name="audit", topic_id=None, partitions=(PartitionView(0, (1, 2), -1, 0, (), (), ()),))


ACTIVE = ClusterSnapshot(
    controller_id=9000,
    active=True,
    controller_epoch=3,
    active_controller=ActiveControllerAddress(9000, "http://127.0.0.1:8080"),
    brokers={
        2: BrokerView(2, "r2", ("PLAINTEXT://h:9093", "CONTROL://h:19093"), 4294967302),
        1: BrokerView(1, "r1", ("PLAINTEXT://h:9092", "CONTROL://h:19092"), 4294967301),
        3: BrokerView(3, None, ("PLAINTEXT://h:9094",), 4294967303),
    },
    topics={"orders": ORDERS, "audit": AUDIT},
    problems=(Problem("/brokers/topics/garbage", "invalid JSON at byte 1", 1_700_000_000_000),),
)


@dataclass
class FakeView(SharedFakeView):
    """The one fake ControllerView, with the session, the uptime and a snapshot that can fail."""

    current: ClusterSnapshot = ACTIVE
    connected: bool = True
    session: int | None = 0x100000A962B0000
    access: ZkAccess = field(default_factory=lambda: ZkAccess("anonymous", tls=False, set_acl=False))
    started: float = field(default_factory=lambda: time.monotonic() - 5120.4)

    def snapshot(self) -> ClusterSnapshot:
        if self.fail_with is not None:
            raise self.fail_with
        return self.current

    @property
    def zk_connected(self) -> bool:
        return self.connected

    @property
    def zk_session_id(self) -> int | None:
        return self.session

    @property
    def zk_access(self) -> ZkAccess:
        return self.access

    def queue_time_percentiles_ms(self) -> Mapping[str, float]:
        return {"p50": 0.2, "p99": 3.1}

    @property
    def started_at_s(self) -> float:
        return self.started
