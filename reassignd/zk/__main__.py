"""``python -m reassignd.zk [PORT]``: a ZooKeeper for trying reassignd by hand (README, "Run it by
hand"): Debian's ``zookeeper`` package run by :class:`~reassignd.zk.server.LocalZooKeeper` on
127.0.0.1:PORT (2181 by default), its data in a temporary directory removed when it stops.
Ctrl-C (or SIGTERM) stops it. Exit 2 with one line when it cannot start."""

from __future__ import annotations

import signal
import sys
import threading

from reassignd.zk.server import LocalZooKeeper, ZooKeeperUnavailable

USAGE = "usage: python -m reassignd.zk [PORT]  (a ZooKeeper on 127.0.0.1:PORT, default 2181)"


def main(argv: list[str]) -> int:
    if len(argv) > 1 or (argv and not argv[0].isdigit()) or (argv and not 0 < int(argv[0]) < 65536):
        print(USAGE, file=sys.stderr)
        return 2
    port = int(argv[0]) if argv else 2181
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    zookeeper = LocalZooKeeper(port=port)
    try:
        zookeeper.start()
    except (ZooKeeperUnavailable, OSError) as e:
        print(
            f"python -m reassignd.zk: error: cannot start ZooKeeper on 127.0.0.1:{port}: {e}", file=sys.stderr
        )
        return 2
    try:
        print(f"ZooKeeper on {zookeeper.connect} (data in {zookeeper.data_dir}); Ctrl-C stops it", flush=True)
        stop.wait()
    finally:
        zookeeper.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
