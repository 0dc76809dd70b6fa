"""Partition reassignment: Kafka's algorithm (KIP-455, phases U, A and B), where reassignments
come from (the API, the legacy znode, KIP-236's extra and cancel znodes), the sequenced request
protocol (KIP-236), and the per-partition validation of requests."""
