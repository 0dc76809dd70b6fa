"""What an event does to the world: its outputs (write steps, control requests for the brokers,
answers), the fenced ZooKeeper writer and its write kinds, a topic znode's write, the stream
records derived from a change, and the failure policy that tells a refusal from a resignation."""
