"""The flags every client of the controller's HTTP API shares (``reassignd admin ...`` and
``reassignd feed ...``), declared once: where the controller is, the token, how an https://
controller is verified, the request timeout. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

from reassignd import options as opt
from reassignd.admin.settings import (
    BOOTSTRAP_HELP,
    REQUEST_TIMEOUT_S,
    TIMEOUT_HELP,
    client_tls,
    parse_controller_url,
)
from reassignd.options import Option
from reassignd.tls import CA_FILE_HELP, CERT_FILE_HELP, KEY_FILE_HELP, ClientTls

BOOTSTRAP_CONTROLLER = Option("bootstrap-controller", parse_controller_url, BOOTSTRAP_HELP, metavar="URL")
AUTH_TOKEN = Option("auth-token", opt.text, "bearer token for the controller's HTTP API", metavar="TOKEN")
TLS_OPTIONS = (
    Option("ca-file", opt.text, CA_FILE_HELP, metavar="FILE"),
    Option("cert-file", opt.text, CERT_FILE_HELP, metavar="FILE"),
    Option("key-file", opt.text, KEY_FILE_HELP, metavar="FILE"),
)
REQUEST_TIMEOUT = Option(
    "request-timeout-s", opt.number(0, inclusive=False), TIMEOUT_HELP, REQUEST_TIMEOUT_S, "S"
)
ZK = Option(
    "zk", opt.zk_connect, "ZooKeeper, for the KIP-236 verbs and zk-acls", metavar="HOST:PORT[,...][/chroot]"
)


def optional_str(values: Mapping[str, object], flag: str) -> str | None:
    value = values.get(flag)
    assert value is None or isinstance(value, str), flag
    return value


def tls_of(values: Mapping[str, object]) -> ClientTls:
    """The TLS side of a client from the merged values, its files loaded now (ValueError)."""
    return client_tls(*(optional_str(values, flag) for flag in ("ca-file", "cert-file", "key-file")))
