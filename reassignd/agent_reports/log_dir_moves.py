"""Asking one broker agent to move replicas between its log dirs (``POST /log-dirs/alter`` on its
CONTROL endpoint, control/log_dir_moves.py): the one forwarding function for everyone who moves
replicas between dirs — the Kafka listener's AlterReplicaLogDirs (34) and the HTTP API's
``POST /v1/log-dirs/moves`` (what ``reassignd admin reassign`` calls for a plan's ``log_dirs``).

As in Kafka, the move goes straight to the broker and touches no znode: it lives in the agent
(which copies under its intra-broker throttle), not in the controller. The agent answers each
replica with Kafka's code (NONE, LOG_DIR_NOT_FOUND, REPLICA_NOT_AVAILABLE, KAFKA_STORAGE_ERROR);
an agent that does not answer, answers an error, garbage or the wrong number of results gives
None (logged), which the callers answer KAFKA_STORAGE_ERROR (56) for every replica.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import aiohttp

from reassignd.agent_reports.fetch import AGENT_TIMEOUT_S
from reassignd.control.log_dir_moves import (
    ALTER_LOG_DIRS_PATH,
    AlterLogDirsRequest,
    AlterLogDirsResponse,
    LogDirMove,
)
from reassignd.control.wire import WireError
from reassignd.strict_json import loads_tracking as loads_strict

log = logging.getLogger(__name__)


async def forward_log_dir_moves(
    session: aiohttp.ClientSession, broker_id: int, url: str, moves: Sequence[LogDirMove]
) -> AlterLogDirsResponse | None:
    """The agent's answer, one result per move in order; None when it cannot be had."""
    body = AlterLogDirsRequest(tuple(moves)).to_json()
    try:
        async with session.post(
            url + ALTER_LOG_DIRS_PATH, json=body, timeout=aiohttp.ClientTimeout(total=AGENT_TIMEOUT_S)
        ) as resp:
            if resp.status != 200:
                log.warning(
                    "broker %d's agent answered HTTP %d to %s", broker_id, resp.status, ALTER_LOG_DIRS_PATH
                )
                return None
            answer = AlterLogDirsResponse.from_json(loads_strict(await resp.read()))
    except (aiohttp.ClientError, TimeoutError, ValueError, WireError, RecursionError) as e:
        log.warning("broker %d's agent at %s did not take the log dir moves: %r", broker_id, url, e)
        return None
    if len(answer.results) != len(moves):
        log.warning(
            "broker %d's agent answered %d results for %d moves", broker_id, len(answer.results), len(moves)
        )
        return None
    return answer
