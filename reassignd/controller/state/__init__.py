"""The cluster as the active controller holds it for one term: the context (with one Move record
per moving partition), replica assignments, the per-broker partition index, and every
partition's state kept encoded as the control channel carries it. No I/O."""
