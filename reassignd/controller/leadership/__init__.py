"""Who leads each partition, on request: elections on demand (ElectLeaders, KIP-460), Kafka's
legacy ``/admin/preferred_replica_election`` znode, and the auto leader rebalance with its timer."""
