"""What the znode codec tests share: small readers of refusals, the strict paths beside the
typed ones, strategies for znodes valid and damaged, and the JSON renderer that can repeat a key."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import strategies as st

from reassignd.int_limits import INT32_MAX
from reassignd.zk.codec import (
    CodecError,
    TopicZnode,
)

TOPIC_ID = "vKbcOsJ9TWCz3qAiVMHqEQ"


def js(value: Any) -> bytes:
    """Test input written the way a hand or another tool might: ordinary JSON with spaces."""
    return json.dumps(value).encode()


def reason(decode: Callable[[bytes | None], object], data: bytes | None) -> str:
    with pytest.raises(CodecError) as caught:
        decode(data)
    assert type(caught.value) is CodecError
    assert str(caught.value) == caught.value.reason
    assert "\n" not in caught.value.reason
    return caught.value.reason


# --- the layout's topic znode --------------------------------------------------------------------

LAYOUT_TOPIC = {
    "version": 2,
    "partitions": {"0": [4, 5, 6, 1, 2, 3], "1": [2, 3, 1]},
    "adding_replicas": {"0": [4, 5, 6]},
    "removing_replicas": {"0": [1, 2, 3]},
}


# --- round trips ---------------------------------------------------------------------------------

broker_ids = st.integers(0, INT32_MAX)
uuids = st.binary(min_size=16, max_size=16).map(lambda raw: base64.urlsafe_b64encode(raw).decode()[:22])


def replica_lists(
    min_size: int = 0, ids: st.SearchStrategy[int] = broker_ids
) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(ids, min_size=min_size, max_size=6, unique=True).map(tuple)


@st.composite
def topic_znodes(draw: st.DrawFn, ids: st.SearchStrategy[int] = broker_ids) -> TopicZnode:
    partitions = draw(st.dictionaries(ids, replica_lists(min_size=1, ids=ids), max_size=5))
    adding: dict[int, tuple[int, ...]] = {}
    removing: dict[int, tuple[int, ...]] = {}
    for p, rs in partitions.items():
        ar = draw(st.lists(st.sampled_from(rs), unique=True).map(tuple))
        rest = [r for r in rs if r not in ar]
        rr = draw(st.lists(st.sampled_from(rest), unique=True).map(tuple)) if rest else ()
        if ar:
            adding[p] = ar
        if rr:
            removing[p] = rr
    return TopicZnode(partitions, adding, removing, draw(st.none() | uuids))


def reorder(value: Any) -> Any:
    """The same JSON with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {key: reorder(value[key]) for key in reversed(value)}
    if isinstance(value, list):
        return [reorder(item) for item in value]
    return value


def json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # a def, not a lambda: hypothesis reads a lambda's source to see it recurse, and at times
    # cannot (a deprecation warning, an error under -W error)
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    json_containers,
    max_leaves=8,
)
DELETE = object()


def json_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value: the keys and indexes that lead there."""
    children = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    )
    return [path] + [sub for key, child in children for sub in json_paths(child, (*path, key))]


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """``value`` with the node at ``path`` replaced by ``new`` (or removed, for DELETE)."""
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    if new is DELETE and len(path) == 1:
        del copy[path[0]]
    else:
        copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy
