"""Paths into a decoded JSON value and a copy changed at one of them: what the two-tier property
tests (journal, plans) use to damage a document one member at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def paths_in(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in ``value``: its own (``()``), then each member's and item's, depth first."""
    found = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            found += paths_in(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += paths_in(v, (*path, i))
    return found


def at(value: Any, path: tuple[Any, ...], change: Callable[[Any], Any]) -> Any:
    """A copy of ``value`` with what is at ``path`` replaced by ``change`` of it."""
    if not path:
        return change(value)
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = at(value[path[0]], path[1:], change)
    return copy
