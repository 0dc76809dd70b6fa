"""A local, single-node ZooKeeper server from Debian's `zookeeper` package, for demos and tests.

Bound to 127.0.0.1 on a free port, admin server off, the four-letter words aiozk needs
whitelisted, data in a temporary directory. Ready when ``srvr`` names its mode (it serves requests).

Faults for tests: ``freeze()`` / ``thaw()`` stop and resume the server process (SIGSTOP /
SIGCONT: sockets stay open and nothing is answered; sessions past their timeout expire once it
resumes, unless their clients get through first), and
``restart()`` stops it and starts it again on the same port with the same data (sessions that
reconnect within their timeout survive, as with a real server restart).

Secured, as a production Kafka cluster's ZooKeeper: ``sasl_users`` (user → password) turns on
SASL DIGEST-MD5 (a JAAS ``Server`` section with ZooKeeper's ``DigestLoginModule``, the SASL
authentication provider); anonymous sessions are still accepted (znodes' ACLs decide what they
may do) unless ``sasl_required``, which closes every session that does not authenticate. ``tls``
also serves a TLS port (``secure_port``, ``secure_connect``; ZooKeeper's Netty connection factory,
from Debian's netty jars), with the PEM certificate and key given, clients verified against the
CA when ``client_auth`` is ``need`` (ZooKeeper's x509 scheme) or ``want``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

ZOOKEEPER_CLASSPATH = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar"
NETTY_JARS = "/usr/share/java/netty-*.Final.jar"  # Debian's libnetty-java: ZooKeeper's TLS port


@dataclass(frozen=True, slots=True)
class ServerTls:
    cert_file: Path  # PEM, the server's certificate (its host names: what clients verify)
    key_file: Path  # PEM (PKCS#8) private key
    ca_file: Path  # PEM: the CA client certificates must be signed by (client_auth want/need)
    client_auth: str = "none"  # none, want or need


ZOOKEEPER_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"

# The server's JVM: a small heap and the serial collector, and for a short-lived server (a demo's,
# a test's) the client compiler alone: C2's compilations cost more CPU than they win back in a
# server's first minutes (60,000 creates and reads from a fresh start: 7.5-8.0 CPU-s against
# 10.1-10.2 s with C2, the same wall time). A benchmark keeps C2 (``quick_jit=False``): its
# figures are compared with older trees' and with raw ZooKeeper throughput.
STEADY_JVM = "-Xms64m -Xmx512m -XX:+UseSerialGC"
QUICK_JVM = f"{STEADY_JVM} -XX:TieredStopAtLevel=1"


class ZooKeeperUnavailable(RuntimeError):
    """Java or the Debian zookeeper package is missing, or the server did not come up."""


# Ports handed out by free_port(): below Linux's ephemeral range (32768-60999 by default), so no
# outgoing connection takes one as its source port between free_port() and its server's bind; a
# block per pytest-xdist worker (PYTEST_XDIST_WORKER=gwN), so parallel workers never meet.
FIRST_PORT = 20000
PORT_BLOCK = 1500
PORT_BLOCKS = 8  # 20000-31999


class _Ports:
    """Hands out ports in sequence from a random start within the process's block: one process
    never hands a port out twice in a row (a server still starting keeps its port), and two
    processes in one block (a test and a demo it runs) start far apart."""

    def __init__(self) -> None:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")
        block = int(worker[2:]) % PORT_BLOCKS if worker[2:].isdigit() else random.randrange(PORT_BLOCKS)
        self.first = FIRST_PORT + block * PORT_BLOCK
        self.next = random.randrange(PORT_BLOCK)

    def take(self) -> int:
        for _ in range(PORT_BLOCK):
            port = self.first + self.next
            self.next = (self.next + 1) % PORT_BLOCK
            if _bindable(port):
                return port
        raise OSError(f"no free port in 127.0.0.1:{self.first}-{self.first + PORT_BLOCK - 1}")


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


_ports: _Ports | None = None


def free_port() -> int:
    """A loopback port free at this moment, for a server about to bind it (see ``_Ports``)."""
    global _ports  # noqa: PLW0603 (one sequence per process, made on first use)
    if _ports is None:
        _ports = _Ports()
    return _ports.take()


def four_letter_word(port: int, word: bytes, timeout_s: float = 1.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
        s.sendall(word)
        chunks = []
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


class LocalZooKeeper:
    """Start with ``start()`` (or as a context manager); ``connect`` is ``127.0.0.1:<port>``."""

    def __init__(
        self,
        *,
        port: int | None = None,
        tick_time_ms: int = 500,
        data_dir: Path | None = None,
        log_path: Path | None = None,
        sasl_users: Mapping[str, str] | None = None,
        sasl_required: bool = False,
        tls: ServerTls | None = None,
        quick_jit: bool = True,
    ) -> None:
        self.tls = tls
        self.quick_jit = quick_jit
        self.secure_port = free_port() if tls is not None else None
        if sasl_required and not sasl_users:
            raise ValueError("sasl_required needs sasl_users")
        self.sasl_users = dict(sasl_users or {})
        self.sasl_required = sasl_required
        self.port = port or free_port()
        self.tick_time_ms = tick_time_ms
        self._own_dir = data_dir is None
        self.data_dir = data_dir or Path(tempfile.mkdtemp(prefix="reassignd-zk-"))
        self.log_path = log_path or self.data_dir / "zookeeper.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.frozen = False

    @property
    def connect(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def secure_connect(self) -> str:
        if self.secure_port is None:
            raise ValueError("this server has no TLS port")
        return f"127.0.0.1:{self.secure_port}"

    def _write_config(self) -> Path:
        cfg = self.data_dir / "zoo.cfg"
        (self.data_dir / "data").mkdir(parents=True, exist_ok=True)
        cfg.write_text(
            "\n".join(
                [
                    f"tickTime={self.tick_time_ms}",
                    f"dataDir={self.data_dir / 'data'}",
                    f"clientPort={self.port}",
                    "clientPortAddress=127.0.0.1",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=srvr,ruok,mntr,stat,cons",
                    "maxClientCnxns=0",
                    f"minSessionTimeout={2 * self.tick_time_ms}",
                    "maxSessionTimeout=60000",
                    "jute.maxbuffer=4194304",
                    *self._sasl_config(),
                    *self._tls_config(),
                    "",
                ]
            )
        )
        return cfg

    def _sasl_config(self) -> list[str]:
        if not self.sasl_users:
            return []
        lines = ["authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"]
        if self.sasl_required:
            lines += [
                "sessionRequireClientSASLAuth=true",
                "enforce.auth.enabled=true",
                "enforce.auth.schemes=sasl",
            ]
        return lines

    def _tls_config(self) -> list[str]:
        tls = self.tls
        if tls is None:
            return []
        keystore = self.data_dir / "server-keystore.pem"
        keystore.write_text(tls.key_file.read_text() + tls.cert_file.read_text())
        return [
            f"secureClientPort={self.secure_port}",
            "secureClientPortAddress=127.0.0.1",
            "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
            f"ssl.keyStore.location={keystore}",
            "ssl.keyStore.type=PEM",
            f"ssl.trustStore.location={tls.ca_file}",
            "ssl.trustStore.type=PEM",
            f"ssl.clientAuth={tls.client_auth}",
            "authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
        ]

    @property
    def jaas_path(self) -> Path:
        return self.data_dir / "jaas.conf"

    def _jvm_options(self) -> list[str]:
        if not self.sasl_users:
            return []
        users = "".join(
            f'\n    user_{user}="{_jaas_escape(password)}"' for user, password in self.sasl_users.items()
        )
        self.jaas_path.write_text(
            f"Server {{\n    org.apache.zookeeper.server.auth.DigestLoginModule required{users};\n}};\n"
        )
        return [f"-Djava.security.auth.login.config={self.jaas_path}"]

    def start(self, timeout_s: float = 30.0) -> LocalZooKeeper:
        java = shutil.which("java")
        if java is None or not Path("/usr/share/java/zookeeper.jar").exists():
            raise ZooKeeperUnavailable(
                "needs java and Debian's zookeeper package (apt-get install zookeeper)"
            )
        cfg = self._write_config()
        log = self.log_path.open("ab")
        env = dict(os.environ)
        env.setdefault("JAVA_TOOL_OPTIONS", QUICK_JVM if self.quick_jit else STEADY_JVM)
        classpath = ZOOKEEPER_CLASSPATH
        if self.tls is not None:
            classpath = ":".join([classpath, *sorted(glob.glob(NETTY_JARS))])
        self.process = subprocess.Popen(
            [java, *self._jvm_options(), "-cp", classpath, ZOOKEEPER_MAIN, str(cfg)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ZooKeeperUnavailable(
                    f"zookeeper exited with {self.process.returncode}; see {self.log_path}"
                )
            with contextlib.suppress(OSError):
                # ruok answers as soon as the process listens; srvr names a mode only once the
                # server serves requests (until then: "not currently serving requests")
                if four_letter_word(self.port, b"srvr").find(b"Mode:") >= 0 and self._secure_port_open():
                    return self
            time.sleep(0.1)
        self.stop()
        raise ZooKeeperUnavailable(f"zookeeper did not serve within {timeout_s} s; see {self.log_path}")

    def _secure_port_open(self) -> bool:
        """The TLS port (bound after the plain one) accepts connections, or there is none."""
        if self.secure_port is None:
            return True
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.secure_port), 1.0):
            return True
        return False

    def stop(self) -> None:
        """Stop the server and, when the data directory is this object's own, remove it."""
        self._stop_process()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def _stop_process(self, *, kill: bool = False) -> None:
        if self.process is not None and self.process.poll() is None:
            if self.frozen:
                # a stopped process would only act on SIGTERM once continued
                self.process.send_signal(signal.SIGCONT)
            if kill:
                self.process.kill()
            else:
                self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None
        self.frozen = False

    def _running(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            raise ZooKeeperUnavailable("zookeeper is not running")
        return self.process

    def freeze(self) -> None:
        """Stop the server process (SIGSTOP): connections stay open but nothing is answered.
        ``thaw()`` resumes it; sessions idle past their timeout by then expire.

        Returns once every thread of the server is stopped: the signal is delivered to each thread
        as it is next scheduled, so a request sent right after ``kill()`` could still be answered."""
        process = self._running()
        process.send_signal(signal.SIGSTOP)
        self.frozen = True
        _wait_stopped(process.pid, timeout_s=5.0)

    def thaw(self) -> None:
        """Resume a frozen server (SIGCONT). A no-op when it is not frozen."""
        if self.frozen:
            self._running().send_signal(signal.SIGCONT)
            self.frozen = False

    def restart(self, *, kill: bool = False, down_s: float = 0.0, timeout_s: float = 30.0) -> LocalZooKeeper:
        """Stop the server (SIGTERM, or SIGKILL with ``kill``), stay down ``down_s`` seconds, then
        start it again on the same port and data directory: znodes are kept, and sessions whose
        clients reconnect within their timeout survive."""
        self._stop_process(kill=kill)
        if down_s > 0:
            time.sleep(down_s)
        return self.start(timeout_s)

    def connected_sessions(self) -> set[int]:
        """The ids of the sessions connected to the client port right now (``cons``; not the TLS
        port's): a session whose client has not reconnected since a restart is not among them,
        and its ephemerals go when it expires."""
        listing = four_letter_word(self.port, b"cons").decode(errors="replace")
        return {int(sid, 16) for sid in re.findall(r"sid=0x([0-9a-f]+)", listing)}

    def __enter__(self) -> LocalZooKeeper:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _jaas_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _wait_stopped(pid: int, *, timeout_s: float) -> None:
    """Wait until every thread of ``pid`` is in the stopped state (Linux's /proc); elsewhere, or if
    /proc cannot tell, return at once."""
    tasks = Path(f"/proc/{pid}/task")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            states = [_task_state(task / "stat") for task in tasks.iterdir()]
        except OSError:
            return
        if all(state in ("T", "t") for state in states if state):
            return
        time.sleep(0.005)
    raise ZooKeeperUnavailable(f"zookeeper (pid {pid}) did not stop within {timeout_s} s")


def _task_state(stat: Path) -> str:
    """The state letter in /proc/<pid>/task/<tid>/stat ('' when the thread is gone)."""
    try:
        text = stat.read_text()
    except OSError:
        return ""
    return text[text.rfind(")") + 2 :][:1]
