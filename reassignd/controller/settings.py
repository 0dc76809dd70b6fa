"""The controller's one frozen settings object, built at the edge (CLI), units in the names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    zk_connect: str  # "host:port[,host:port...][/chroot]"
    controller_id: int = 9000
    http_host: str = "127.0.0.1"
    http_port: int = 8080  # 0 = a free port
    auth_tokens_path: str | None = None
    session_timeout_s: float = 6.0
    zk_request_timeout_s: float = 10.0
    control_request_timeout_s: float = 10.0
    control_retry_backoff_ms: int = 100
    control_retry_backoff_max_ms: int = 2000
    quota_window_num: int = 11
    quota_window_size_s: float = 1.0
    events_bootstrap: str | None = None
    events_topic: str = "reassignd.events"
