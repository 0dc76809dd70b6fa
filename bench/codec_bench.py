"""Codec micro benchmark: µs per call of the znode codecs failover leans on, fast path against
the strict path, both measured in this run on the same bytes and values.

Failover decodes every partition state znode (100,000 of them for 1,000 topics × 100
partitions) and every topic znode. The strict path is what the codecs did before their fast
path (and still do whenever it cannot vouch for a znode): ``load_object_strictly`` (json.loads
with a pairs hook written in Python) then every field check with its error message at hand.

    python bench/codec_bench.py                 # a few seconds
    python bench/codec_bench.py --rounds 50     # steadier figures on a busy machine

Each figure is CPU time per call (``time.process_time``, so that other processes on a busy
machine count less), the best of ``--rounds`` rounds, fast and strict rounds interleaved.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from typing import Annotated

import msgspec

from reassignd.control.protocol import Header, LeaderAndIsrRequest, WirePartitionState
from reassignd.control.request_sizes import encode_request
from reassignd.int_limits import INT32_MAX
from reassignd.zk import codec
from reassignd.zk.codec import CodecError
from reassignd.zk.json_fields import load_object_strictly

BROKERS = tuple(range(1, 7))  # RF 3 spread round-robin over six brokers
TOPIC_ID = "vKbcOsJ9TWCz3qAiVMHqEQ"
BROKER = codec.BrokerRegistration(
    broker_id=1,
    host="kafka-1.example.com",
    port=9092,
    endpoints=(
        codec.Endpoint("PLAINTEXT", "kafka-1.example.com", 9092),
        codec.Endpoint("CONTROL", "kafka-1.example.com", 19092),
    ),
    rack="rack-a",
    timestamp_ms=1700000000000,
)
STATE = codec.PartitionState(leader=3, leader_epoch=17, controller_epoch=5, isr=(3, 1, 2))
TOPIC = codec.TopicZnode(
    {p: tuple(BROKERS[(p + i) % len(BROKERS)] for i in range(3)) for p in range(100)}, topic_id=TOPIC_ID
)


def strict_decode_partition_state(data: bytes) -> codec.PartitionState:
    return codec._read_partition_state(load_object_strictly(data))


def strict_decode_topic(data: bytes) -> codec.TopicZnode:
    return codec._read_topic(load_object_strictly(data))


def strict_decode_broker(data: bytes) -> codec.BrokerRegistration:
    return codec._read_broker(BROKER.broker_id, load_object_strictly(data))


def dump_as_before(what: str, obj: dict[str, object], decode: Callable[[bytes], object]) -> bytes:
    """The encoders' writer before the fast path: json.dumps (a new encoder each call), then decode."""
    try:
        data = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
        decode(data)
    except (CodecError, UnicodeEncodeError, TypeError) as e:
        raise ValueError(f"cannot encode {what}: {getattr(e, 'reason', e)}") from None
    return data


def strict_encode_partition_state(state: codec.PartitionState) -> bytes:
    """encode_partition_state as it was: build the JSON, then have the strict decoder accept it."""
    obj: dict[str, object] = {"version": 1, "leader": state.leader, "leader_epoch": state.leader_epoch}
    obj.update({"controller_epoch": state.controller_epoch, "isr": list(state.isr)})
    return dump_as_before("partition state", obj, strict_decode_partition_state)


def strict_encode_topic(znode: codec.TopicZnode) -> bytes:
    """encode_topic as it was (the topic_id is set here: version 3)."""
    obj: dict[str, object] = {"version": 3}
    for name, replicas in (
        ("partitions", znode.partitions),
        ("adding_replicas", znode.adding),
        ("removing_replicas", znode.removing),
    ):
        obj[name] = {
            str(p): list(replicas[p]) for p in sorted(replicas) if replicas[p] or name == "partitions"
        }
    obj["topic_id"] = znode.topic_id
    return dump_as_before("topic znode", obj, strict_decode_topic)


# --- msgspec against the hand-written paths ---------------------------------------------------------

Int32 = Annotated[int, msgspec.Meta(ge=-1, le=INT32_MAX)]
BrokerId = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]


class StateStruct(msgspec.Struct, frozen=True, gc=False):
    """The partition state znode as a msgspec struct: strict types and ranges (no duplicate-key
    or unique-ISR check: msgspec has neither, which is why the codecs do not use it)."""

    version: Annotated[int, msgspec.Meta(ge=1, le=1)]
    leader: Int32
    leader_epoch: Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]
    controller_epoch: Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]
    isr: tuple[BrokerId, ...]


STATE_DECODER = msgspec.json.Decoder(StateStruct)


def control_request(partitions: int) -> LeaderAndIsrRequest:
    states = tuple(
        WirePartitionState(f"topic-{p // 100}", p % 100, 5, BROKERS[p % 6], 7, (1, 2, 3), 9, (1, 2, 3))
        for p in range(partitions)
    )
    return LeaderAndIsrRequest(Header(9000, 5, 100), states)


def control_decode_as_before(body: bytes) -> tuple[WirePartitionState, ...]:
    """The agent's reader before msgspec: json.loads into dicts, then a frozen dataclass per state
    (field checks by hand), as `bench/README.md`'s profile of the agents found it."""
    out = []
    for raw in json.loads(body)["partition_states"]:
        for key in ("partition", "controller_epoch", "leader", "leader_epoch", "partition_epoch"):
            if type(raw[key]) is not int:
                raise ValueError(key)
        out.append(
            _DataclassState(
                raw["topic"],
                raw["partition"],
                raw["controller_epoch"],
                raw["leader"],
                raw["leader_epoch"],
                tuple(raw["isr"]),
                raw["partition_epoch"],
                tuple(raw["replicas"]),
                tuple(raw.get("adding_replicas", ())),
                tuple(raw.get("removing_replicas", ())),
                bool(raw.get("is_new", False)),
            )
        )
    return tuple(out)


@dataclasses.dataclass(frozen=True, slots=True)
class _DataclassState:
    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False


def control_encode_as_before(request: LeaderAndIsrRequest) -> bytes:
    return json.dumps(request.to_json(), separators=(",", ":")).encode()


def per_call_us(call: Callable[[], object], calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        call()
    return (time.process_time() - started) / calls * 1e6


def compare(
    label: str,
    fast: Callable[[], object],
    strict: Callable[[], object],
    calls: int,
    rounds: int,
    *,
    same: Callable[[object, object], bool] = lambda a, b: a == b,
) -> tuple[float, float]:
    assert same(fast(), strict()), f"{label}: the two paths disagree"
    best_fast = best_strict = float("inf")
    for _ in range(rounds):
        best_fast = min(best_fast, per_call_us(fast, calls))
        best_strict = min(best_strict, per_call_us(strict, calls))
    print(f"{label:<34} {best_strict:9.2f} {best_fast:9.2f} {best_strict / best_fast:8.1f}x")
    return best_fast, best_strict


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    state = codec.encode_partition_state(STATE)
    topic = codec.encode_topic(TOPIC)
    print(f"state znode: {len(state)} bytes {state.decode()}")
    print(f"topic znode: {len(topic)} bytes, 100 partitions, RF 3, version 3")
    print(f"{'µs per call':<34} {'strict':>9} {'fast':>9} {'speed-up':>9}")
    state_us, strict_state_us = compare(
        "decode_partition_state",
        lambda: codec.decode_partition_state(state),
        lambda: strict_decode_partition_state(state),
        2000,
        args.rounds,
    )
    topic_us, strict_topic_us = compare(
        "decode_topic (100 partitions)",
        lambda: codec.decode_topic(topic),
        lambda: strict_decode_topic(topic),
        100,
        args.rounds,
    )
    compare(
        "encode_partition_state",
        lambda: codec.encode_partition_state(STATE),
        lambda: strict_encode_partition_state(STATE),
        2000,
        args.rounds,
    )
    compare(
        "encode_topic (100 partitions)",
        lambda: codec.encode_topic(TOPIC),
        lambda: strict_encode_topic(TOPIC),
        100,
        args.rounds,
    )
    broker = codec.encode_broker(BROKER)
    compare(
        "decode_broker",
        lambda: codec.decode_broker(BROKER.broker_id, broker),
        lambda: strict_decode_broker(broker),
        2000,
        args.rounds,
    )
    print()
    print(f"{'msgspec, µs per call':<34} {'ours':>9} {'msgspec':>9} {'speed-up':>9}")
    compare(
        "partition state znode decode",
        lambda: STATE_DECODER.decode(state),
        lambda: codec.decode_partition_state(state),
        2000,
        args.rounds,
        same=lambda m, ours: (
            isinstance(m, StateStruct)
            and isinstance(ours, codec.PartitionState)
            and (m.leader, m.leader_epoch, m.controller_epoch, m.isr)
            == (ours.leader, ours.leader_epoch, ours.controller_epoch, ours.isr)
        ),
    )
    request = control_request(1000)
    body = encode_request(request)
    print(f"LeaderAndIsr body: 1,000 partitions, {len(body)} bytes")
    compare(
        "LeaderAndIsr decode (agent)",
        lambda: LeaderAndIsrRequest.decode(body),
        lambda: control_decode_as_before(body),
        20,
        args.rounds,
        same=lambda m, before: (
            [dataclasses.astuple(s) for s in before]  # type: ignore[attr-defined]
            == [tuple(getattr(x, f) for f in x.__struct_fields__) for x in m.partition_states]
        ),  # type: ignore[attr-defined]
    )
    compare(
        "LeaderAndIsr encode (controller)",
        lambda: encode_request(request),
        lambda: control_encode_as_before(request),
        20,
        args.rounds,
    )
    fast_s = (100_000 * state_us + 1_000 * topic_us) / 1e6
    strict_s = (100_000 * strict_state_us + 1_000 * strict_topic_us) / 1e6
    print(f"failover decoding, 100,000 states + 1,000 topics: {strict_s:.2f} s strict, {fast_s:.2f} s fast")


if __name__ == "__main__":
    main()
