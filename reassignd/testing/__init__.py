"""Helpers for testing reassignd and what is built on it; nothing in the product imports them.

- :mod:`reassignd.testing.fake_view`: a fake ``ControllerView`` (what the HTTP layer serves from),
  checked by mypy against the Protocol, with an in-process app to call it through real HTTP;
- :mod:`reassignd.testing.polling`: ``eventually``, the one polling helper (a bound for hangs, not a
  speed assertion).

A local ZooKeeper for tests is :class:`reassignd.zk.server.LocalZooKeeper` (the demo uses it too).
"""
