"""Self-healing: a lost broker's replicas moved to the other brokers once its grace is over
(Cruise Control's, off by default)."""
