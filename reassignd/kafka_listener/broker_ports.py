"""Which registered broker gets which port of the Kafka listener (``--kafka-broker-ports``). Pure.

A broker keeps its port while it stays registered. A broker that registers takes, in order of
id, the port it had before if that one is free, else the lowest port of the range that no other
broker had before, else the lowest free one; with the ephemeral range ``(0, 0)`` it takes port 0
(a free one, chosen by the system when bound). Ports open at most: ``cap``, and never more than
the range holds; the brokers beyond are ``over_cap`` (advertised at the bootstrap address).
Ports that failed to bind (``unusable``) are not handed out again until the caller forgets them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

EPHEMERAL = (0, 0)


@dataclass(frozen=True, slots=True)
class Assignment:
    ports: Mapping[int, int]  # broker id -> the port it listens on (0: a free one, to bind)
    over_cap: tuple[int, ...]  # registered brokers without a port, in order of id


def capacity(port_range: tuple[int, int], cap: int) -> int:
    first, last = port_range
    return cap if port_range == EPHEMERAL else min(cap, last - first + 1)


def assign(
    brokers: Iterable[int],
    current: Mapping[int, int],
    remembered: Mapping[int, int],
    port_range: tuple[int, int],
    cap: int,
    unusable: Collection[int] = (),
) -> Assignment:
    """The ports of ``brokers`` given the ports open now (``current``) and the ports brokers had
    before (``remembered``)."""
    registered = sorted(set(brokers))
    ports = {b: current[b] for b in registered if b in current}
    limit = capacity(port_range, cap)
    newcomers = [b for b in registered if b not in ports]
    if port_range == EPHEMERAL:
        for b in newcomers[: max(0, limit - len(ports))]:
            ports[b] = 0
        return Assignment(ports, tuple(b for b in registered if b not in ports))
    first, last = port_range
    taken = set(ports.values()) | set(unusable)
    kept_for = {p: b for b, p in remembered.items() if first <= p <= last}
    for b in newcomers:
        if len(ports) >= limit:
            break
        port = remembered.get(b)
        if port is None or not first <= port <= last or port in taken:
            free = range(first, last + 1)
            port = next((p for p in free if p not in taken and kept_for.get(p, b) == b), None)
            if port is None:
                port = next((p for p in free if p not in taken), None)
        if port is None:
            break
        ports[b] = port
        taken.add(port)
    return Assignment(ports, tuple(b for b in registered if b not in ports))


def remember(remembered: Mapping[int, int], ports: Mapping[int, int]) -> dict[int, int]:
    """``remembered`` updated with the ports open now (ephemeral 0s left out), one broker per port
    (the latest holder), so it never holds more entries than the range has ports."""
    by_port = {p: b for b, p in remembered.items()}
    for b, p in ports.items():
        if p:
            by_port[p] = b
    out: dict[int, int] = {}
    for p, b in by_port.items():
        if ports.get(b, p) == p:
            out[b] = p
    return out
