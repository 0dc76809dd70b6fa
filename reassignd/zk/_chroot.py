"""The chroot of a connect string (``host:port/kafka``), applied on the client side.

ZooKeeper's wire protocol has no chroot: a client prefixes every path it sends and strips the
prefix from every path it receives (created sequential paths, watch events).
"""

from __future__ import annotations


def split_connect(connect: str) -> tuple[str, str]:
    """Servers and chroot of a connect string: ``h1:p1,h2:p2/kafka`` → ``h1:p1,h2:p2``, ``/kafka``."""
    servers, slash, chroot = connect.partition("/")
    chroot = chroot.strip("/")
    return servers, (f"/{chroot}" if slash and chroot else "")


class Chroot:
    __slots__ = ("prefix",)

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix  # "" for none

    def absolute(self, path: str) -> str:
        """The server's path for a chroot-relative one (which must start with ``/``)."""
        if not path.startswith("/"):
            raise ValueError(f"not an absolute znode path: {path!r}")
        if not self.prefix:
            return path
        return self.prefix if path == "/" else self.prefix + path

    def relative(self, absolute: str) -> str:
        prefix = self.prefix
        if not prefix:
            return absolute
        if absolute == prefix:
            return "/"
        return absolute[len(prefix) :] if absolute.startswith(prefix + "/") else absolute
