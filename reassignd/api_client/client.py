"""The one client of the controller's HTTP API: ``reassignd admin``, ``reassignd feed``, the demo
and the tests call the API through it.

One aiohttp session per client. The bootstrap URL may name any controller instance: its
``GET /v1/status`` names the active one, which every later request goes to (unless the client is
opened with ``follow_active=False``, to talk to that very instance). A write that still lands on a
standby (a failover in between) answers 503 NOT_CONTROLLER with the new active controller's URL;
the request is sent there once (a refused request changed nothing).

``exchange`` answers any status with the decoded body; ``get``/``post``/``delete`` want 200 and
raise :class:`ApiError` otherwise; the typed calls (``status``, ``reassignments``, ``alter``,
``topic``, ``batch``...) decode the answer into the contract's structs (``reassignd.contracts``:
the very types the server encodes) and raise :class:`ResponseError` for anything else.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import aiohttp
import msgspec

from reassignd.api_client import shapes
from reassignd.api_client.errors import ApiError, ClientError, NoAnswer, ResponseError, Unreachable
from reassignd.api_client.kafka_probe import speaks_kafka
from reassignd.contracts.batches import Batches, BatchStatus, SubmitBatchResponse
from reassignd.contracts.cluster import (
    Brokers,
    LogDirs,
    MoveLogDirsResponse,
    Partition,
    Status,
    Topic,
    Topics,
)
from reassignd.contracts.errors import ActiveController, NotControllerError
from reassignd.contracts.reassignments import AlterReassignmentsResponse, ListReassignmentsResponse
from reassignd.contracts.requests import AlterReassignmentsRequest, MoveLogDirsRequest, SubmitBatchRequest
from reassignd.errors import error_name
from reassignd.tls import ClientTls
from reassignd.topic_partition import TopicPartition

CLIENT_ID = "reassignd-admin"
NOT_CONTROLLER = 41
REASSIGNMENTS = "/v1/reassignments"
BATCHES = "/v1/batches"

Query = Sequence[tuple[str, str]]
_JSON = {"Content-Type": "application/json"}


def _url(active: ActiveController | None) -> str | None:
    return active.http.rstrip("/") if active is not None and active.http else None


def _redirect(status: int, doc: Any) -> str | None:
    """Where a 503 NOT_CONTROLLER says the active controller is (None: another answer, or a
    standby that knows none)."""
    if status != 503:
        return None
    try:
        refused = msgspec.convert(doc, NotControllerError)
    except msgspec.ValidationError:
        return None
    return _url(refused.active_controller) if refused.error_code == NOT_CONTROLLER else None


def _error(method: str, path: str, status: int, doc: Any) -> ApiError:
    code = doc.get("error_code") if isinstance(doc, dict) else None
    if not isinstance(code, int) or isinstance(code, bool):
        return ApiError(f"{method} {path}: HTTP {status}", status=status, error_code=None)
    name = doc.get("error_name") or error_name(code)
    message = doc.get("error_message")
    text = f"{method} {path}: HTTP {status} {name} ({code})" + (f": {message}" if message else "")
    if status == 401:
        text += " (give a token with --auth-token or REASSIGND_AUTH_TOKEN)"
    return ApiError(text, status=status, error_code=code)


class ApiClient:
    def __init__(
        self, session: aiohttp.ClientSession, base_url: str, timeout_s: float, *, follow_active: bool = True
    ) -> None:
        self.session = session
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.follow_active = follow_active

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        bootstrap: str,
        token: str | None = None,
        timeout_s: float = 30.0,
        *,
        client_id: str | None = CLIENT_ID,
        follow_active: bool = True,
        tls: ClientTls | None = None,
    ) -> AsyncIterator[ApiClient]:
        """A client of the active controller, found from ``bootstrap`` (with ``follow_active``
        False: of that very instance, active or not). ``client_id`` is sent as X-Client-Id (the
        quota entity; None: no header). An https:// controller's certificate is always verified:
        against ``tls.ca_file`` when given, else the system's CAs."""
        headers = {} if client_id is None else {"X-Client-Id": client_id}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        connector = None if tls is None or tls.default else aiohttp.TCPConnector(ssl=tls.context())
        async with aiohttp.ClientSession(
            headers=headers, timeout=aiohttp.ClientTimeout(total=timeout_s), connector=connector
        ) as session:
            api = cls(session, bootstrap, timeout_s, follow_active=follow_active)
            if follow_active:
                await api.find_active()
            yield api

    async def find_active(self) -> None:
        status = await self.status()
        if status.active:
            return
        active = _url(status.active_controller)
        if active is None:
            raise ClientError(f"{self.base_url} is a standby controller and knows no active controller")
        self.base_url = active

    async def get(self, path: str, query: Query = ()) -> Any:
        return await self.request("GET", path, query=query)

    async def post(self, path: str, body: Any) -> Any:
        return await self.request("POST", path, body=body)

    async def delete(self, path: str) -> Any:
        return await self.request("DELETE", path)

    async def request(self, method: str, path: str, *, query: Query = (), body: Any = None) -> Any:
        """The decoded JSON of a 200 answer; :class:`ApiError` for any other."""
        status, doc = await self.exchange(method, path, query=query, body=body)
        if status != 200:
            raise _error(method, path, status, doc)
        return doc

    async def exchange(
        self, method: str, path: str, *, query: Query = (), body: Any = None, accept_text: bool = False
    ) -> tuple[int, Any]:
        """The status and decoded JSON of any answer. A body that is not JSON is None for an error
        status and refused (ClientError) for a 200, unless ``accept_text`` (``/metrics``, the
        status page): then it is the text. When following the active controller, a 503
        NOT_CONTROLLER naming it is sent there once."""
        status, doc = await self._send(method, path, query, body, accept_text)
        if self.follow_active:
            active = _redirect(status, doc)
            if active is not None and active != self.base_url:
                self.base_url = active
                status, doc = await self._send(method, path, query, body, accept_text)
        return status, doc

    async def _send(
        self, method: str, path: str, query: Query, body: Any, accept_text: bool
    ) -> tuple[int, Any]:
        url = self.base_url + path
        try:
            data = msgspec.json.encode(body) if method in ("POST", "PUT") else None  # dicts or structs
            async with self.session.request(
                method,
                url,
                params=list(query) or None,
                data=data,
                headers=_JSON if data is not None else None,
            ) as resp:
                status, text = resp.status, await resp.text()
        except TimeoutError:
            raise NoAnswer(f"{method} {url}: no answer within {self.timeout_s:g} s") from None
        except aiohttp.ClientConnectorCertificateError as e:
            raise Unreachable(
                f"cannot reach the controller at {self.base_url}: its TLS certificate is not "
                f"trusted ({e.certificate_error}); give its CA with --ca-file"
            ) from None
        except (
            aiohttp.ServerDisconnectedError,
            aiohttp.ClientResponseError,
            aiohttp.ClientPayloadError,
        ) as e:
            if await speaks_kafka(self.base_url):
                address = urlsplit(self.base_url).netloc
                raise Unreachable(
                    f"{address} speaks the Kafka protocol, not reassignd's HTTP API; "
                    "give the controller's HTTP address"
                ) from None
            raise Unreachable(f"cannot reach the controller at {self.base_url}: {e}") from None
        except (aiohttp.ClientError, OSError) as e:
            raise Unreachable(f"cannot reach the controller at {self.base_url}: {e}") from None
        try:
            return status, json.loads(text)
        except ValueError:
            if accept_text:
                return status, text
            if status == 200:
                raise ClientError(f"{method} {url}: the answer is not JSON") from None
            return status, None

    # --- typed calls --------------------------------------------------------------------------------
    # (the answers decoded into the contract's structs; a body that is not the documented shape
    # raises ResponseError naming the request)

    async def typed(
        self, method: str, path: str, shape: type[T], *, query: Query = (), body: Any = None
    ) -> T:
        """``request`` with the 200 answer decoded as the contract's ``shape``."""
        doc = await self.request(method, path, query=query, body=body)
        return decoded(doc, shape, f"{method} {path}")

    async def status(self) -> Status:
        """``GET /v1/status``."""
        return await self.typed("GET", "/v1/status", Status)

    async def brokers(self) -> Brokers:
        """``GET /v1/brokers``: the registered brokers, and the demoted ones."""
        return await self.typed("GET", "/v1/brokers", Brokers)

    async def topics(self) -> Topics:
        """``GET /v1/topics``."""
        return await self.typed("GET", "/v1/topics", Topics)

    async def topic(self, name: str) -> dict[int, Partition]:
        """``GET /v1/topics/{name}``: partition id → the partition."""
        answer = await self.typed("GET", f"/v1/topics/{quote(name, safe='')}", Topic)
        return shapes.partitions_by_id(answer)

    async def log_dirs(self, brokers: Iterable[int] = ()) -> LogDirs:
        """``GET /v1/log-dirs``: every live broker's replicas and their sizes (or only those of
        ``brokers``), future replicas being moved between dirs included."""
        query = [("broker", str(b)) for b in sorted(set(brokers))]
        return await self.typed("GET", "/v1/log-dirs", LogDirs, query=query)

    async def move_log_dirs(self, body: MoveLogDirsRequest) -> MoveLogDirsResponse:
        """``POST /v1/log-dirs/moves``: AlterReplicaLogDirs for one broker, each replica's code."""
        return await self.typed("POST", "/v1/log-dirs/moves", MoveLogDirsResponse, body=body)

    async def reassignments(self, topics: Iterable[str] = ()) -> ListReassignmentsResponse:
        """ListPartitionReassignments: the partitions moving (of ``topics``, or all); keyed by
        partition with ``shapes.reassignments_by_partition``."""
        query = [("topic", t) for t in sorted(set(topics))]
        return await self.typed("GET", REASSIGNMENTS, ListReassignmentsResponse, query=query)

    async def alter(self, body: AlterReassignmentsRequest | Mapping[str, Any]) -> AlterReassignmentsResponse:
        """AlterPartitionReassignments (Kafka's shape or a plan, as the request structs or a JSON
        document read elsewhere): each partition's result (``shapes.partition_results``)."""
        return await self.typed("POST", REASSIGNMENTS, AlterReassignmentsResponse, body=body)

    async def cancel(self, partitions: Iterable[TopicPartition]) -> AlterReassignmentsResponse:
        """Cancel the moves of ``partitions`` (``replicas: null``, as Kafka's --cancel)."""
        return await self.alter(shapes.cancel_request(partitions))

    async def cancel_all(self) -> AlterReassignmentsResponse:
        """``DELETE /v1/reassignments``: cancel every move."""
        return await self.typed("DELETE", REASSIGNMENTS, AlterReassignmentsResponse)

    async def batches(self) -> Batches:
        """``GET /v1/batches``: every batch, oldest first (BatchSummary: no moves in flight)."""
        return await self.typed("GET", BATCHES, Batches)

    async def batch(self, batch_id: str) -> BatchStatus:
        """``GET /v1/batches/{batch_id}``: one batch, with its moves in flight."""
        return await self.typed("GET", f"{BATCHES}/{quote(batch_id, safe='')}", BatchStatus)

    async def submit_batch(self, body: SubmitBatchRequest | Mapping[str, Any]) -> SubmitBatchResponse:
        """``POST /v1/batches``: the request struct, or a body as a batch file holds it (sent as
        written: what it leaves out the controller fills in)."""
        return await self.typed("POST", BATCHES, SubmitBatchResponse, body=body)

    async def control_batch(self, batch_id: str, action: str) -> BatchStatus:
        """``POST /v1/batches/{batch_id}/{action}`` (pause, resume, stop, rollback)."""
        path = f"{BATCHES}/{quote(batch_id, safe='')}/{action}"
        return await self.typed("POST", path, BatchStatus, body={})


T = TypeVar("T")


def decoded(body: Any, shape: type[T], what: str) -> T:
    """``body`` as the contract's ``shape``; anything else raises ResponseError naming ``what``."""
    try:
        return shapes.decode(body, shape)
    except ResponseError as e:
        raise ResponseError(f"unexpected answer from the controller to {what}: {e}") from None
