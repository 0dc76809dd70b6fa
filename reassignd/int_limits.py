"""The ranges of Kafka's wire integers (INT16, INT32, INT64) and of a TCP port, defined once: the bounds every id,
partition, epoch, count, duration and error code is checked against, at every door (HTTP, the
Kafka listener, the znode codecs, the journals, the API's schemas). Imports nothing."""

from __future__ import annotations

INT16_MIN = -(2**15)
INT16_MAX = 2**15 - 1
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
PORT_MAX = 2**16 - 1  # a TCP port: 0..65535
