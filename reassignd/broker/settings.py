"""The broker agent's one settings object, and how ``reassignd cluster`` lays agents out.

Each field that is a command-line option says so where it is declared (:func:`reassignd.options.option`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from reassignd.broker.log_dirs import LogDirSpec, parse_log_dirs
from reassignd.int_limits import PORT_MAX
from reassignd.options import integer, number, option, text, zk_connect
from reassignd.zk.security import NO_SECURITY, ZkSecurity
from reassignd.zk.values import DEFAULT_SESSION_TIMEOUT_S

DEFAULT_REPLICATION_BYTES_PER_S = 100 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class BrokerSettings:
    """One agent. ``control_port`` 0 picks a free port; PLAINTEXT and CONTROL share it."""

    zk_connect: str = option(
        parse=zk_connect,
        help="ZooKeeper connect string, Kafka's zookeeper.connect form",
        metavar="HOST:PORT[,HOST:PORT...][/chroot]",
        flag="zk",
    )
    broker_id: int = option(parse=integer(0), help="broker id", metavar="N", flag="id")
    rack: str | None = option(None, parse=text, help="rack of the broker", metavar="R")
    host: str = option("127.0.0.1", parse=text, help="host the agent binds and registers", metavar="HOST")
    control_port: int = option(
        0, parse=integer(0, PORT_MAX), help="port of the CONTROL listener; 0 picks a free one", metavar="PORT"
    )
    replication_bytes_per_s: float = option(
        DEFAULT_REPLICATION_BYTES_PER_S,
        parse=number(0, inclusive=True),
        help="replication bandwidth of the broker, each direction",
        metavar="BYTES",
    )
    replica_lag_time_max_ms: int = option(
        30000, parse=integer(1), help="a follower not caught up for this long leaves the ISR", metavar="MS"
    )
    isr_linger_ms: int = option(
        100, parse=integer(0), help="ISR changes are batched over this long", metavar="MS"
    )
    log_dirs: tuple[LogDirSpec, ...] | None = option(
        None,
        parse=parse_log_dirs,
        help="simulated log directories (JBOD), each with an optional capacity in bytes; "
        "without it the agent has one directory, /sim",
        metavar="DIR[:CAPACITY_BYTES],...",
    )
    session_timeout_s: float = option(
        DEFAULT_SESSION_TIMEOUT_S,
        parse=number(0, inclusive=False),
        help="ZooKeeper session timeout, seconds",
        metavar="S",
    )
    # ZooKeeper SASL and ACLs: options of their own (reassignd.zk.security), built apart
    zk_security: ZkSecurity = NO_SECURITY
    # not options
    fetch_interval_ms: int = 100
    produce_bytes_per_s: float = 0.0  # leader growth of topics without a produce-rate config

    def __post_init__(self) -> None:
        if self.broker_id < 0:
            raise ValueError(f"broker id must be >= 0, got {self.broker_id}")
        if not 0 <= self.control_port <= PORT_MAX:
            raise ValueError(f"control port out of range: {self.control_port}")
        if self.replication_bytes_per_s < 0 or self.produce_bytes_per_s < 0:
            raise ValueError("rates must be >= 0")
        if self.replica_lag_time_max_ms <= 0 or self.fetch_interval_ms <= 0 or self.isr_linger_ms < 0:
            raise ValueError("replica lag time and fetch interval must be > 0, ISR linger >= 0")
        if self.session_timeout_s <= 0:
            raise ValueError("session timeout must be > 0")

    @property
    def replica_lag_time_max_s(self) -> float:
        return self.replica_lag_time_max_ms / 1000.0

    @property
    def isr_linger_s(self) -> float:
        return self.isr_linger_ms / 1000.0

    @property
    def fetch_interval_s(self) -> float:
        return self.fetch_interval_ms / 1000.0


@dataclass(frozen=True, slots=True)
class ClusterLayout:
    """``reassignd cluster``: how many agents, their ids and racks."""

    brokers: int = option(parse=integer(1), help="number of broker agents", metavar="N")
    first_id: int = option(
        1, parse=integer(0), help="id of the first broker; the others follow", metavar="ID"
    )
    racks: int | None = option(
        None,
        parse=integer(1),
        help='spread brokers over K racks: broker i gets "r<(i - first-id) mod K>"',
        metavar="K",
    )
    processes: int = option(
        1,
        parse=integer(1),
        help="run the agents in P processes, each a group of consecutive ids (real brokers are "
        "separate processes; one process's agents share one CPU)",
        metavar="P",
    )


def rack_of(index: int, racks: int | None) -> str | None:
    """Rack of the ``index``-th broker (0-based) of a cluster with ``racks`` racks."""
    if racks is None:
        return None
    if racks <= 0:
        raise ValueError(f"racks must be > 0, got {racks}")
    return f"r{index % racks}"


def cluster_settings(
    base: BrokerSettings, brokers: int, first_id: int, racks: int | None
) -> list[BrokerSettings]:
    """Settings of ``brokers`` agents with ids ``first_id..``; broker i gets rack r<(i-first_id) mod K>.

    A non-zero ``base.control_port`` is the first agent's port; the others take the next ones.
    """
    if brokers <= 0:
        raise ValueError(f"brokers must be > 0, got {brokers}")
    out = []
    for i in range(brokers):
        port = base.control_port + i if base.control_port else 0
        rack = rack_of(i, racks) if racks is not None else base.rack
        out.append(replace(base, broker_id=first_id + i, rack=rack, control_port=port))
    return out
