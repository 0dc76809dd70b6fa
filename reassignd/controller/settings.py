"""The controller's one frozen settings object, units in the names.

Each field that is a command-line option says so where it is declared (:func:`reassignd.options.option`):
its flag, ``REASSIGND_*`` variable and TOML key are derived from it (``reassignd/config.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from reassignd.options import (
    base_url,
    boolean,
    bootstrap,
    bounds,
    choice,
    host_port,
    integer,
    number,
    option,
    port_range,
    text,
    zk_connect,
)
from reassignd.zk.security import NO_SECURITY, ZkSecurity
from reassignd.zk.values import DEFAULT_REQUEST_TIMEOUT_S, DEFAULT_SESSION_TIMEOUT_S

ZK_HELP = "ZooKeeper connect string, Kafka's zookeeper.connect form"
ZK_METAVAR = "HOST:PORT[,HOST:PORT...][/chroot]"
SESSION_TIMEOUT_HELP = "ZooKeeper session timeout, seconds"
POSITIVE = number(0, inclusive=False)
NON_NEGATIVE = number(0, inclusive=True)


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    zk_connect: str = option(parse=zk_connect, help=ZK_HELP, metavar=ZK_METAVAR, flag="zk")
    controller_id: int = option(
        9000, parse=integer(0), help="this controller's id (must not clash with a broker id)", metavar="ID"
    )
    http_host: str = option(
        "127.0.0.1",
        parse=host_port,
        help="address of the HTTP API; port 0 picks a free one",
        metavar="HOST:PORT",
        flag="http",
        pair="http_port",
    )
    http_port: int = 8080  # 0 = a free port; set with http_host by --http
    http_advertised: str | None = option(
        None,
        parse=base_url,
        help="the URL of this instance's HTTP API that clients are told, in /controller and every 41 "
        "NOT_CONTROLLER answer (default: the bound address; a wildcard bind needs it)",
        metavar="URL",
    )
    # HTTPS for the HTTP API (reassignd.tls): off without --tls-cert
    tls_cert: str | None = option(
        None, parse=text, help="PEM certificate (chain) of the HTTP API: serve HTTPS", metavar="FILE"
    )
    tls_key: str | None = option(None, parse=text, help="PEM private key of --tls-cert", metavar="FILE")
    tls_client_ca: str | None = option(
        None,
        parse=text,
        help="PEM CA file: every HTTPS client must present a certificate it signed (mutual TLS)",
        metavar="FILE",
    )
    # the Kafka-protocol admin listener (reassignd.kafka_listener): off without --kafka-listener
    kafka_listener_host: str | None = option(
        None,
        parse=host_port,
        help="address of the Kafka-protocol admin listener (off when unset); port 0 picks a free one",
        metavar="HOST:PORT",
        flag="kafka-listener",
        pair="kafka_listener_port",
    )
    kafka_listener_port: int = 0  # set with kafka_listener_host by --kafka-listener
    kafka_advertised_host: str | None = option(
        None,
        parse=host_port,
        help="the address Kafka clients are told (default: the bound one; a wildcard bind needs it)",
        metavar="HOST:PORT",
        flag="kafka-advertised",
        pair="kafka_advertised_port",
    )
    kafka_advertised_port: int = 0  # set with kafka_advertised_host by --kafka-advertised
    kafka_tls_cert: str | None = option(
        None, parse=text, help="PEM certificate of the Kafka listener (TLS: SSL, SASL_SSL)", metavar="FILE"
    )
    kafka_tls_key: str | None = option(
        None, parse=text, help="PEM private key of --kafka-tls-cert", metavar="FILE"
    )
    kafka_broker_ports: tuple[int, int] | None = option(
        None,
        parse=port_range,
        help="a port of the Kafka listener per registered broker, from this range (0: a free port "
        "each), so each broker is its own node to clients; off when unset (every broker at the "
        "--kafka-listener address)",
        metavar="FIRST-LAST|0",
    )
    kafka_max_broker_ports: int = option(
        256,
        parse=integer(1),
        help="broker ports open at most (--kafka-broker-ports); brokers beyond are advertised at "
        "the --kafka-listener address, with a warning",
        metavar="N",
    )
    kafka_max_connections_per_ip: int = option(
        100,
        parse=integer(1),
        help="Kafka-listener connections open at once from one client address; more are closed "
        "as they are accepted (Kafka's max.connections.per.ip)",
        metavar="N",
    )
    auth_tokens_path: str | None = option(
        None,
        parse=text,
        help="TOML file of bearer tokens; required to bind anything but loopback",
        metavar="FILE",
        flag="auth-tokens",
    )
    # the event stream to Kafka (off without bootstrap servers); SASL/TLS passed to aiokafka
    events_bootstrap_servers: str | None = option(
        None,
        parse=bootstrap,
        help="Kafka bootstrap servers of the event stream (off when unset)",
        metavar="HOST:PORT[,...]",
    )
    events_topic: str = option(
        "reassignd.events",
        parse=text,
        help="Kafka topic of the event stream (created when missing)",
        metavar="TOPIC",
    )
    events_buffer_records: int = option(
        10_000,
        parse=integer(1),
        help="event records held for Kafka at most; more are dropped and counted",
        metavar="N",
    )
    events_progress_interval_s: float = option(
        10.0,
        parse=NON_NEGATIVE,
        help="seconds between reassignment_progress records of each moving partition (0: none)",
        metavar="S",
    )
    events_max_subscribers: int = option(
        100,
        parse=integer(1),
        help="concurrent GET /v1/events streams at most; one more is answered 503",
        metavar="N",
    )
    events_security_protocol: str = option(
        "PLAINTEXT",
        parse=choice("plaintext", "ssl", "sasl_plaintext", "sasl_ssl", upper=True),
        help="security protocol to Kafka",
        metavar="PROTOCOL",
    )
    events_sasl_mechanism: str | None = option(
        None, parse=text, help="SASL mechanism to Kafka (PLAIN, SCRAM-SHA-256, ...)", metavar="M"
    )
    events_sasl_username: str | None = option(None, parse=text, help="SASL username to Kafka", metavar="USER")
    events_sasl_password: str | None = option(
        None, parse=text, help="SASL password to Kafka", metavar="PASSWORD"
    )
    events_ssl_cafile: str | None = option(
        None, parse=text, help="CA file to verify Kafka's TLS certificates", metavar="FILE"
    )
    max_partitions_per_request: int = option(
        50_000,
        parse=integer(1),
        help="partitions one reassignment, election, CreatePartitions or batch may name at most; "
        "a request naming more is refused 42 INVALID_REQUEST",
        metavar="N",
    )
    quota_window_num: int = option(
        11,
        parse=integer(1),
        help="KIP-599 controller.quota.window.num: burst = rate × num × size",
        metavar="N",
    )
    quota_window_size_s: float = option(
        1.0, parse=POSITIVE, help="KIP-599 controller.quota.window.size.seconds", metavar="S"
    )
    # Kafka's auto leader rebalance: leadership back to each partition's preferred replica
    auto_leader_rebalance_enable: bool = option(
        True,
        parse=boolean,
        help="Kafka's auto.leader.rebalance.enable: give leadership back to preferred replicas",
        metavar="BOOL",
    )
    leader_imbalance_per_broker_percentage: int = option(
        10,
        parse=integer(0, 100),
        help="Kafka's leader.imbalance.per.broker.percentage: a broker leading fewer of the partitions "
        "it prefers than this share allows is rebalanced",
        metavar="PCT",
    )
    leader_imbalance_check_interval_s: float = option(
        300.0,
        parse=POSITIVE,
        help="Kafka's leader.imbalance.check.interval.seconds: seconds between rebalance checks",
        metavar="S",
    )
    # the batch executor: defaults of a batch's limits, the stuck-move rule, the scheduler's tick
    batch_moves_per_broker: int = option(  # Cruise Control's default concurrency per broker
        5,
        parse=integer(1),
        help="a batch's default cap of concurrent incoming (and outgoing) moves per broker",
        metavar="N",
    )
    batch_moves_in_cluster: int = option(
        1000, parse=integer(1), help="a batch's default cap of moves in the cluster", metavar="N"
    )
    batch_leader_moves_per_broker: int = option(
        1000,
        parse=integer(1),
        help="a batch's default cap of concurrent leadership changes per broker",
        metavar="N",
    )
    batch_adaptive_moves_per_broker: tuple[int, int] | None = option(
        None,
        parse=bounds,
        help="a batch's default adaptive concurrency: each broker's cap of moves raised step by step "
        "between MIN and MAX while the cluster is healthy, halved when it is not (unset: fixed caps)",
        metavar="MIN:MAX",
    )
    agent_sample_interval_s: float = option(
        2.0,
        parse=NON_NEGATIVE,
        help="seconds between the samples of the agents' reports (fetch rates, partition sizes, stuck "
        "moves) that adaptive concurrency and self-healing act on (0: no samples)",
        metavar="S",
    )
    dir_move_interval_s: float = option(
        1.0,
        parse=NON_NEGATIVE,
        help="seconds between the rounds that carry out the batches' moves between log dirs (JBOD "
        "log_dirs): the agents' reports read, the moves asked, the arrived ones ended (0: none)",
        metavar="S",
    )
    # self-healing (Cruise Control's, off by default as there): a lost broker's replicas re-placed
    self_healing: bool = option(
        False,
        parse=boolean,
        switch=True,
        help="self-healing: when a broker hosting replicas has been gone longer than the grace, move "
        "its replicas to the other brokers (a batch per broker, owner self-healing)",
    )
    self_healing_broker_grace_s: float = option(
        1800.0,
        parse=NON_NEGATIVE,
        help="how long a broker may be gone before self-healing moves its replicas (measured from its "
        "loss, recorded in ZooKeeper)",
        metavar="S",
    )
    batch_stuck_after_s: float = option(
        600.0,
        parse=POSITIVE,
        help="a move running longer than this and slower than --batch-stuck-below-bytes-per-s is stuck",
        metavar="S",
    )
    batch_stuck_below_bytes_per_s: float = option(
        1024.0 * 1024.0, parse=NON_NEGATIVE, help="the rate under which a long move is stuck", metavar="B"
    )
    batch_retention_s: float = option(
        7 * 24 * 3600.0,
        parse=NON_NEGATIVE,
        help="how long the journal of a batch that ended (completed, stopped, failed, rolled back) is kept",
        metavar="S",
    )
    session_timeout_s: float = option(
        DEFAULT_SESSION_TIMEOUT_S, parse=POSITIVE, help=SESSION_TIMEOUT_HELP, metavar="S"
    )
    hand_over_timeout_s: float = option(
        10.0,
        parse=POSITIVE,
        help="at a stop (SIGTERM), how long the active instance may take to finish the event in hand "
        "and hand its role over before it leaves anyway",
        metavar="S",
    )
    # ZooKeeper SASL and ACLs: options of their own (reassignd.zk.security), built apart
    zk_security: ZkSecurity = NO_SECURITY
    # not options: tuned by tests and benchmarks
    zk_request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    control_request_timeout_s: float = 10.0
    control_retry_backoff_ms: int = 100
    control_retry_backoff_max_ms: int = 2000
    batch_tick_s: float = 1.0
    kafka_max_frame_bytes: int = 10 * 1024 * 1024  # admin requests only: the HTTP API's body limit
    kafka_max_connections: int = 1000
    kafka_max_in_flight: int = 32  # pipelined requests read ahead per connection
    kafka_idle_timeout_s: float = 600.0  # Kafka's connections.max.idle.ms
