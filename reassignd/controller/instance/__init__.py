"""What one controller instance holds across its active terms and every part uses: the event
queue and the events it carries, the control channel to the brokers, metrics, and ``Shared``."""
