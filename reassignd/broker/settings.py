"""The broker agent's one settings object, built at the edge (CLI flags, tests)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from reassignd.zk.client import DEFAULT_SESSION_TIMEOUT_S

DEFAULT_REPLICATION_BYTES_PER_S = 100 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class BrokerSettings:
    """One agent. ``control_port`` 0 picks a free port; PLAINTEXT and CONTROL share it."""

    zk_connect: str
    broker_id: int
    rack: str | None = None
    host: str = "127.0.0.1"
    control_port: int = 0
    replication_bytes_per_s: float = DEFAULT_REPLICATION_BYTES_PER_S
    replica_lag_time_max_ms: int = 30000
    isr_linger_ms: int = 100
    session_timeout_s: float = DEFAULT_SESSION_TIMEOUT_S
    fetch_interval_ms: int = 100
    produce_bytes_per_s: float = 0.0  # leader growth of topics without a produce-rate config

    def __post_init__(self) -> None:
        if self.broker_id < 0:
            raise ValueError(f"broker id must be >= 0, got {self.broker_id}")
        if not 0 <= self.control_port <= 65535:
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
