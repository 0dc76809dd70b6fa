"""What an event does to the world: the fenced write gateway (``FencedWrites``: every write kind,
declared once) and its implementation (the fenced ``ZkWriter``), an event's outputs (control
requests for the brokers, answers, what it ended, and the gateway its handlers write through), a
topic znode's write, the stream records derived from a change, and the failure policy that tells
a refusal from a resignation."""
