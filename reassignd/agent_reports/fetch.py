"""Asking broker agents for their replicas (``GET /replicas`` on each CONTROL endpoint), for
whoever shows log dirs or progress (the HTTP API, the Kafka listener's DescribeLogDirs).

An agent that does not answer in time, answers an error or garbage simply contributes nothing:
progress is best-effort and never fails the request that wanted it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping

import aiohttp

from reassignd.control.replicas_report import ReplicasReport
from reassignd.control.wire import REPLICAS_PATH
from reassignd.controller.model.snapshot import BrokerView
from reassignd.strict_json import loads_tracking as loads_strict

log = logging.getLogger(__name__)

AGENT_TIMEOUT_S = 2.0  # per agent, connection included
CONTROL_LISTENER = "CONTROL"


def agent_url(endpoints: Iterable[str]) -> str | None:
    """``http://host:port`` of the ``CONTROL://host:port`` endpoint, or None without one.
    An IPv6 host (written without brackets in BrokerView.endpoints) gets its brackets back."""
    for endpoint in endpoints:
        listener, sep, address = endpoint.partition("://")
        if listener != CONTROL_LISTENER or not sep:
            continue
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            return None
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{port}"
    return None


def agent_urls(brokers: Mapping[int, BrokerView], wanted: Iterable[int]) -> dict[int, str]:
    """The CONTROL URL of each wanted broker that is live and has one."""
    urls: dict[int, str] = {}
    for broker_id in sorted(set(wanted)):
        broker = brokers.get(broker_id)
        url = None if broker is None else agent_url(broker.endpoints)
        if url is not None:
            urls[broker_id] = url
    return urls


async def fetch_report(
    session: aiohttp.ClientSession, broker_id: int, url: str, *, timeout_s: float = AGENT_TIMEOUT_S
) -> ReplicasReport | None:
    """One agent's report, or None when it cannot be had (logged at debug level)."""
    try:
        async with session.get(url + REPLICAS_PATH, timeout=aiohttp.ClientTimeout(total=timeout_s)) as resp:
            if resp.status != 200:
                log.debug(
                    "broker %d's agent answered HTTP %d to GET %s", broker_id, resp.status, REPLICAS_PATH
                )
                return None
            body = await resp.read()
        report = ReplicasReport.from_json(loads_strict(body))
    except (aiohttp.ClientError, TimeoutError, ValueError, RecursionError) as e:
        log.debug("no replicas report from broker %d at %s: %r", broker_id, url, e)
        return None
    if report.broker_id != broker_id:  # a stale endpoint now served by another agent
        log.debug(
            "ignoring the report of broker %d found at broker %d's endpoint %s",
            report.broker_id,
            broker_id,
            url,
        )
        return None
    return report


async def fetch_reports(
    session: aiohttp.ClientSession, urls: Mapping[int, str], *, timeout_s: float = AGENT_TIMEOUT_S
) -> dict[int, ReplicasReport]:
    """Every agent's report, asked concurrently; the brokers that did not answer are left out."""
    async with asyncio.TaskGroup() as tg:
        tasks = {
            broker_id: tg.create_task(
                fetch_report(session, broker_id, url, timeout_s=timeout_s),
                name=f"replicas-report-{broker_id}",
            )
            for broker_id, url in urls.items()
        }
    return {broker_id: report for broker_id, task in tasks.items() if (report := task.result()) is not None}


class SharedReports:
    """The broker agents' reports, one round of questions shared by the requests that want the
    same agents at the same time."""

    def __init__(self) -> None:
        self._asking: dict[tuple[tuple[int, str], ...], asyncio.Task[dict[int, ReplicasReport]]] = {}

    async def fetch(
        self, session: aiohttp.ClientSession, urls: Mapping[int, str]
    ) -> dict[int, ReplicasReport]:
        key = tuple(sorted(urls.items()))
        task = self._asking.get(key)
        if task is None:
            task = asyncio.ensure_future(fetch_reports(session, urls))
            self._asking[key] = task
            task.add_done_callback(lambda done: self._done(key, done))
        # a request that goes away does not cancel the round the others wait for
        return await asyncio.shield(task)

    def _done(self, key: tuple[tuple[int, str], ...], task: asyncio.Task[dict[int, ReplicasReport]]) -> None:
        if self._asking.get(key) is task:
            del self._asking[key]
        if not task.cancelled():
            task.exception()  # retrieved: raised to every waiter, never logged as unretrieved
