"""Real processes for integration tests: controllers, broker agents, and HTTP/ZooKeeper helpers.

Every process runs the ``reassignd`` CLI's entry point with its command line, forked warm from a
server that imported the package once (``tests/warm_start.py``; ``python -m reassignd`` with
``REASSIGND_COLD_START=1``), logs to a file under the test's tmp dir, and is killed at teardown by
the ``procs`` fixture.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any, Generic
from urllib.parse import urlsplit

import aiohttp
from typing_extensions import TypeVar

from reassignd.api_client.client import ApiClient
from reassignd.controller.runtime.controller import Controller
from reassignd.executor import journal
from reassignd.executor import paths as batch_paths
from reassignd.testing.kit import InProcessCommand
from reassignd.testing.polling import eventually as eventually  # noqa: PLC0414 (the tests take it from here)
from reassignd.zk import codec, paths
from reassignd.zk.client import ZkClient
from reassignd.zk.server import free_port
from tests import warm_start

T = TypeVar("T")
# what runs a component: a process (Procs), or a task of the test's loop (the kit's); a bare
# ``ControllerProc`` in a helper serves both
P = TypeVar("P", bound="Proc | InProcessCommand", default=Any)


class Proc:
    def __init__(self, args: list[str], log_path: Path) -> None:
        self.args = args
        self.log_path = log_path
        self._log = log_path.open("ab")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.popen = warm_start.start(args, log_path, env, self._log)

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _kill_group(self) -> None:
        """SIGKILL to the process and whatever it started (``cluster --processes``'s children):
        it leads its own session, so its process group."""
        if isinstance(self.popen, warm_start.WarmProcess):
            self.popen.kill_group()
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)

    def kill(self) -> None:
        if self.alive:
            self._kill_group()
        self.popen.wait(timeout=10)

    def terminate(self, timeout_s: float = 15.0) -> int:
        if self.alive:
            self.popen.send_signal(signal.SIGTERM)
        try:
            return self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout=10)
            raise

    def close(self) -> None:
        self._kill_group()  # children included, even when the process itself has exited
        self.popen.wait(timeout=10)
        if isinstance(self.popen, warm_start.WarmProcess):
            self.popen.close()
        self._log.close()


class Launcher(Generic[P]):
    """Starts the components of one test (controllers, agents) from their command lines; what
    runs them is the subclass's: processes (:class:`Procs`) or the test's own loop (:class:`Kit`)."""

    def __init__(self, zk_connect: str, log_dir: Path, zk_args: tuple[str, ...] = ()) -> None:
        self.zk_connect = zk_connect
        self.log_dir = log_dir
        # flags of every component's ZooKeeper session (a secured server's --zk-sasl-user ...)
        self.zk_args = zk_args
        self.started: list[P] = []

    def _run(self, args: list[str], log_path: Path) -> P:
        raise NotImplementedError

    def start(self, name: str, args: list[str]) -> P:
        component = self._run(args, self.log_dir / f"{name}-{len(self.started)}.log")
        self.started.append(component)
        return component

    def controller(
        self, controller_id: int = 9000, session_timeout_s: float = 2.0, *extra: str
    ) -> ControllerProc[P]:
        port = free_port()
        proc = self.start(
            f"controller-{controller_id}",
            [
                "controller",
                "--zk",
                self.zk_connect,
                "--controller-id",
                str(controller_id),
                "--http",
                f"127.0.0.1:{port}",
                "--session-timeout-s",
                str(session_timeout_s),
                *self.zk_args,
                *extra,
            ],
        )
        return ControllerProc(proc, f"http://127.0.0.1:{port}", controller_id)

    def cluster(self, brokers: int, first_id: int = 1, racks: int | None = None, *extra: str) -> P:
        args = ["cluster", "--zk", self.zk_connect, "--brokers", str(brokers), "--first-id", str(first_id)]
        if racks:
            args += ["--racks", str(racks)]
        return self.start(f"cluster-{first_id}", [*args, "--session-timeout-s", "2", *self.zk_args, *extra])

    def broker(self, broker_id: int, *extra: str) -> P:
        return self.start(
            f"broker-{broker_id}",
            [
                "broker",
                "--zk",
                self.zk_connect,
                "--id",
                str(broker_id),
                "--session-timeout-s",
                "2",
                *self.zk_args,
                *extra,
            ],
        )

    def controller_via(
        self, zk_connect: str, controller_id: int = 9000, session_timeout_s: float = 2.0, *extra: str
    ) -> ControllerProc[P]:
        """A controller whose ``--zk`` is ``zk_connect`` (e.g. a proxy in front of ZooKeeper)
        rather than this test's connect string."""
        port = free_port()
        proc = self.start(
            f"controller-{controller_id}",
            [
                "controller",
                "--zk",
                zk_connect,
                "--controller-id",
                str(controller_id),
                "--http",
                f"127.0.0.1:{port}",
                "--session-timeout-s",
                str(session_timeout_s),
                *self.zk_args,
                *extra,
            ],
        )
        return ControllerProc(proc, f"http://127.0.0.1:{port}", controller_id)


class Procs(Launcher[Proc]):
    """Starts processes for one test and kills whatever is left at teardown."""

    def _run(self, args: list[str], log_path: Path) -> Proc:
        return Proc(args, log_path)

    def restart(self, proc: Proc) -> Proc:
        """Start ``proc``'s command line again (same flags, so the same ports) once it is dead;
        the new process logs to a file of its own."""
        proc.close()
        name = proc.log_path.stem.rsplit("-", 1)[0]
        return self.start(name, proc.args)

    def restart_controller(self, c: ControllerProc) -> ControllerProc[Proc]:
        """The same controller (id, flags, HTTP URL) started again once it is dead."""
        return ControllerProc(self.restart(c.proc), c.url, c.controller_id, c.token)

    def close(self) -> None:
        for proc in self.started:
            proc.close()


class Kit(Launcher[InProcessCommand]):
    """The in-process cluster kit (:mod:`reassignd.testing.kit`): the same command lines as
    :class:`Procs`, run in the test's loop; stopped (planned stops) at teardown by the ``kit``
    fixture. A kill, a SIGTERM or a restart raises ``NeedsAProcess``: use ``procs`` for those."""

    def _run(self, args: list[str], log_path: Path) -> InProcessCommand:
        return InProcessCommand(args, log_path)

    async def close(self) -> None:
        """Stop every component, the last started first (agents before their controller)."""
        errors = []
        for component in reversed(self.started):
            try:
                await component.stop()
            except Exception as e:  # each is stopped; the first error is raised after
                errors.append(e)
        if errors:
            raise errors[0]


class ControllerProc(Generic[P]):
    def __init__(self, proc: P, url: str, controller_id: int, token: str | None = None) -> None:
        self.proc = proc
        self.url = url
        self.controller_id = controller_id
        self.token = token  # the bearer token its requests carry (a controller with a tokens file)

    async def get(self, path: str) -> tuple[int, Any]:
        return await http_get(self.url + path, token=self.token)

    async def post(self, path: str, body: Any) -> tuple[int, Any]:
        return await http_request("POST", self.url + path, body, token=self.token)

    async def delete(self, path: str) -> tuple[int, Any]:
        return await http_request("DELETE", self.url + path, token=self.token)

    async def status(self) -> dict[str, Any] | None:
        try:
            code, body = await self.get("/v1/status")
        except (aiohttp.ClientError, OSError):
            return None
        return body if code == 200 else None


async def http_request(
    method: str, url: str, body: Any = None, timeout_s: float = 30.0, token: str | None = None
) -> tuple[int, Any]:
    """One request through the API client, to that very instance (no following of the active
    controller, no client id): the status and the JSON body, or the text when it is not JSON.
    A connection failure raises ConnectionError, no answer TimeoutError."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    async with ApiClient.open(
        f"{parts.scheme}://{parts.netloc}", token, timeout_s=timeout_s, client_id=None, follow_active=False
    ) as api:
        return await api.exchange(method, path, body=body, accept_text=True)


async def http_get(url: str, timeout_s: float = 15.0, token: str | None = None) -> tuple[int, Any]:
    return await http_request("GET", url, timeout_s=timeout_s, token=token)


async def active_one(*controllers: ControllerProc) -> tuple[ControllerProc, dict[str, Any]]:
    async def probe() -> tuple[ControllerProc, dict[str, Any]] | None:
        for c in controllers:
            s = await c.status()
            if s and s["active"]:
                return c, s
        return None

    return await eventually(probe, what="an active controller")


async def state_of(zk: ZkClient, topic: str, p: int) -> codec.PartitionState | None:
    znode = await zk.get_or_none(paths.partition_state(topic, p))
    return None if znode is None else codec.decode_partition_state(znode.data)


async def read_journal(zk: ZkClient, batch_id: str) -> journal.Journal:
    """A batch's journal as a controller loads it: the head, then the znodes it names."""
    head = journal.decode_head((await zk.get(batch_paths.batch(batch_id))).data)
    names = [*head.layout.chunk_names(), *head.layout.throttle_names()]
    data = [(await zk.get(batch_paths.child(batch_id, n))).data for n in names]
    chunks = len(head.layout.chunks)
    return journal.decode_journal(head, data[:chunks], data[chunks:])


async def wait_brokers(c: ControllerProc, ids: set[int]) -> list[dict[str, Any]]:
    async def probe() -> list[dict[str, Any]] | None:
        code, body = await c.get("/v1/brokers")
        if code == 200 and {b["id"] for b in body["brokers"]} == ids:
            return list(body["brokers"])
        return None

    return await eventually(probe, what=f"brokers {sorted(ids)}")


async def hosted(broker: dict[str, Any]) -> set[tuple[str, int]]:
    control = next(e for e in broker["endpoints"] if e.startswith("CONTROL://"))
    code, body = await http_get("http://" + control.removeprefix("CONTROL://") + "/replicas")
    assert code == 200
    return {(r["topic"], r["partition"]) for r in body["replicas"]}


async def controller_epoch(zk: ZkClient) -> int:
    return codec.decode_controller_epoch((await zk.get(paths.CONTROLLER_EPOCH)).data)


def problems_text(controller: Controller) -> str:
    """An in-process controller's reported problems, paths and reasons, as one string."""
    return " ".join(f"{p.path} {p.reason}" for p in controller.snapshot().problems)


def two_free_ports() -> tuple[socket.socket, int]:
    """A listening socket holding port p, with p + 1 free when it was checked (both from the
    tests' own block of ports, below the range outgoing connections take theirs from)."""
    for _ in range(50):
        port = free_port()
        if free_port() != port + 1:
            continue
        held = socket.socket()
        try:
            held.bind(("127.0.0.1", port))
        except OSError:
            held.close()
            continue
        held.listen()
        return held, port
    raise AssertionError("no two consecutive free ports")
