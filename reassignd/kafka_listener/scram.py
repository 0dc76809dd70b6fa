"""DescribeUserScramCredentials (50), which ``kafka-configs --describe --entity-type users`` sends
beside DescribeClientQuotas. reassignd keeps no SCRAM credentials (its SASL mechanism is PLAIN
against the tokens file), so the answer is Kafka's for a cluster without any: every user named
answers 91 RESOURCE_NOT_FOUND, a user named twice 92 DUPLICATE_RESOURCE (once), and "all users"
(a null or empty list) an empty list; the request itself is answered NONE. Pure but for the
handler's signature.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kafka.protocol.admin import DescribeUserScramCredentialsResponse

from reassignd.kafka_listener.context import RequestContext

RESOURCE_NOT_FOUND = 91
DUPLICATE_RESOURCE = 92


def scram_results(users: list[str] | None) -> list[tuple[str, int, str]]:
    """Per user answered, in Kafka's order (the distinct users named, then each duplicated user
    once): (user, error code, message). None or empty: every user with credentials, i.e. none."""
    if not users:
        return []
    counts = Counter(users)
    duplicated = [u for u in counts if counts[u] > 1]
    results = [
        (u, RESOURCE_NOT_FOUND, f"Attempt to describe a user credential that does not exist: {u}")
        for u in counts
        if counts[u] == 1
    ]
    results += [
        (
            u,
            DUPLICATE_RESOURCE,
            f"Cannot describe SCRAM credentials for the same user twice in a single request: {u}",
        )
        for u in duplicated
    ]
    return results


def _response(results: list[tuple[str, int, str]], code: int = 0, message: str | None = None) -> Any:
    Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
    return DescribeUserScramCredentialsResponse(
        throttle_time_ms=0,
        error_code=code,
        error_message=message,
        results=[
            Result(user=user, error_code=error, error_message=text, credential_infos=[])
            for user, error, text in results
        ],
    )


def _named(request: Any) -> list[str] | None:
    return None if request.users is None else [u.name for u in request.users]


async def describe_user_scram_credentials(ctx: RequestContext, request: Any) -> Any:
    return _response(scram_results(_named(request)))


def describe_user_scram_credentials_refusal(request: Any, version: int, code: int, message: str) -> Any:
    named = _named(request) or []
    return _response([(u, code, message) for u in dict.fromkeys(named)], code, message)
