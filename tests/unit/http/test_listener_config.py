"""The HTTP listener's settings at the edge: ``--http-advertised``, the wildcard rule, TLS flags that
go together, and the files checked at start (each refusal one line, exit 2 from the CLI)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from reassignd.config import ConfigError, ControllerCommand, load_command, resolve
from reassignd.controller.settings import ControllerSettings
from tests.pki import make_pki

ZK = "127.0.0.1:2181/kafka"
TOKENS = '[tokens."abc"]\nuser = "alice"\nrole = "admin"\n'


def controller(flags: Mapping[str, object], env: Mapping[str, str] | None = None) -> ControllerSettings:
    command = resolve("controller", {"zk": ZK, **flags}, dict(env or {}), {})
    assert isinstance(command, ControllerCommand)
    return command.settings


def refused(flags: Mapping[str, object]) -> str:
    with pytest.raises(ConfigError) as caught:
        resolve("controller", {"zk": ZK, **flags}, {}, {})
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_advertised_url_from_flag_env_and_file() -> None:
    assert controller({"http-advertised": "http://c-0.reassignd:8080/"}).http_advertised == (
        "http://c-0.reassignd:8080"
    )
    env = {"REASSIGND_HTTP_ADVERTISED": "http://[fd00::7]:8080"}
    assert controller({}, env).http_advertised == "http://[fd00::7]:8080"
    file = resolve("controller", {"zk": ZK}, {}, {"http-advertised": "http://from-file:1"})
    assert isinstance(file, ControllerCommand) and file.settings.http_advertised == "http://from-file:1"
    assert controller({}).http_advertised is None  # the bound address is advertised


@pytest.mark.parametrize(
    "url",
    [
        "c-0.reassignd:8080",
        "ftp://c-0:21",
        "http://",
        "http://c-0:8080/api",
        "http://c-0:99999",
        "http://u@c-0",
    ],
)
def test_bad_advertised_urls(url: str) -> None:
    assert refused({"http-advertised": url}).startswith("--http-advertised: ")


@pytest.mark.parametrize("bind", ["0.0.0.0:8080", "[::]:8080"])
def test_a_wildcard_bind_needs_an_advertised_url(bind: str) -> None:
    message = refused({"http": bind, "auth-tokens": "/etc/tokens.toml"})
    assert "binds every interface: give --http-advertised URL" in message
    settings = controller(
        {"http": bind, "auth-tokens": "/etc/tokens.toml", "http-advertised": "http://c-0.reassignd:8080"}
    )
    assert settings.http_advertised == "http://c-0.reassignd:8080"
    # a specific address is its own advertisement
    assert controller({"http": "10.1.2.3:8080", "auth-tokens": "/etc/t.toml"}).http_advertised is None


def test_tls_flags_go_together() -> None:
    assert refused({"tls-cert": "c.pem"}) == "give both --tls-cert and --tls-key, or neither"
    assert refused({"tls-key": "k.pem"}) == "give both --tls-cert and --tls-key, or neither"
    assert refused({"tls-client-ca": "ca.pem"}).startswith("--tls-client-ca (mutual TLS) needs --tls-cert")
    settings = controller({"tls-cert": "c.pem", "tls-key": "k.pem", "tls-client-ca": "ca.pem"})
    assert (settings.tls_cert, settings.tls_key, settings.tls_client_ca) == ("c.pem", "k.pem", "ca.pem")


def test_the_advertised_scheme_matches_tls() -> None:
    tls = {"tls-cert": "c.pem", "tls-key": "k.pem"}
    assert "serves HTTPS (--tls-cert), so give a https:// URL" in refused(
        {**tls, "http-advertised": "http://c-0:8443"}
    )
    assert "serves plain HTTP (no --tls-cert), so give a http:// URL" in refused(
        {"http-advertised": "https://c-0:8443"}
    )
    assert controller({**tls, "http-advertised": "https://c-0:8443"}).http_advertised == "https://c-0:8443"


def test_tls_files_are_loaded_at_start(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    command = load_command(
        ["controller", "--zk", ZK, "--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key)], {}
    )
    assert isinstance(command, ControllerCommand)
    with pytest.raises(ConfigError, match=r"^--tls-cert/--tls-key/--tls-client-ca: cannot load "):
        load_command(
            ["controller", "--zk", ZK, "--tls-cert", str(pki.server_key), "--tls-key", str(pki.server_key)],
            {},
        )
    with pytest.raises(ConfigError, match=r"cannot load .*missing-ca.pem"):
        load_command(
            [
                "controller", "--zk", ZK, "--tls-cert", str(pki.server_cert), "--tls-key",
                str(pki.server_key), "--tls-client-ca", str(tmp_path / "missing-ca.pem"),
            ],
            {},
        )  # fmt: skip


def test_the_console_script_exits_2_with_one_line(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    done = subprocess.run(
        [sys.executable, "-m", "reassignd", "controller", "--zk", ZK, "--http", "0.0.0.0:0",
         "--auth-tokens", str(tokens)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("reassignd controller: error: --http 0.0.0.0:0 binds every interface")
    assert done.stderr.count("\n") == 1
