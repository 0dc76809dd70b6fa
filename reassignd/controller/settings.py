"""The controller's one frozen settings object, built at the edge (CLI), units in the names."""

from __future__ import annotations

from dataclasses import dataclass

from reassignd.zk.client import DEFAULT_REQUEST_TIMEOUT_S, DEFAULT_SESSION_TIMEOUT_S


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    zk_connect: str  # "host:port[,host:port...][/chroot]"
    controller_id: int = 9000
    http_host: str = "127.0.0.1"
    http_port: int = 8080  # 0 = a free port
    auth_tokens_path: str | None = None
    session_timeout_s: float = DEFAULT_SESSION_TIMEOUT_S
    zk_request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    control_request_timeout_s: float = 10.0
    control_retry_backoff_ms: int = 100
    control_retry_backoff_max_ms: int = 2000
    quota_window_num: int = 11
    quota_window_size_s: float = 1.0
    # the event stream to Kafka (off without bootstrap servers); SASL/TLS passed to aiokafka
    events_bootstrap_servers: str | None = None
    events_topic: str = "reassignd.events"
    events_buffer_records: int = 10_000
    events_progress_interval_s: float = 10.0  # reassignment_progress records; 0 = none
    events_security_protocol: str = "PLAINTEXT"
    events_sasl_mechanism: str | None = None
    events_sasl_username: str | None = None
    events_sasl_password: str | None = None
    events_ssl_cafile: str | None = None
    # the batch executor: defaults of a batch's limits, the stuck-move rule, the scheduler's tick
    batch_moves_per_broker: int = 5  # Cruise Control's default concurrency per broker
    batch_moves_in_cluster: int = 1000
    batch_leader_moves_per_broker: int = 1000
    batch_stuck_after_s: float = 600.0
    batch_stuck_below_bytes_per_s: float = 1024.0 * 1024.0
    batch_tick_s: float = 1.0
