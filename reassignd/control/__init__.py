"""The controller ↔ broker-agent control channel's wire format, shared by the controller, the
agents and the HTTP layer (which reads the agents' replica reports)."""
