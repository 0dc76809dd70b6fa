"""A small PKI made at test time with the ``openssl`` command: a CA, a server certificate it signed
for 127.0.0.1 and localhost, a client certificate it signed (mutual TLS), and a second, unrelated
CA with its own server certificate, and a certificate the CA signed for another host (what a
client must refuse)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

DAYS = "2"


@dataclass(frozen=True, slots=True)
class Pki:
    ca_cert: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca_cert: Path  # signed nothing this test trusts
    other_server_cert: Path  # for 127.0.0.1 too, but signed by the other CA
    other_server_key: Path
    elsewhere_server_cert: Path  # signed by the trusted CA, for another host only (not 127.0.0.1)
    elsewhere_server_key: Path


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def _ca(directory: Path, name: str) -> tuple[Path, Path]:
    cert, key = directory / f"{name}.pem", directory / f"{name}-key.pem"
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-days", DAYS, "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(cert),
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    return cert, key


def _signed(directory: Path, name: str, ca: tuple[Path, Path], extensions: str) -> tuple[Path, Path]:
    cert, key, csr = directory / f"{name}.pem", directory / f"{name}-key.pem", directory / f"{name}.csr"
    ext = directory / f"{name}.ext"
    ext.write_text(extensions)
    _openssl(
        "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(csr),
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]), "-CAcreateserial",
        "-days", DAYS, "-out", str(cert), "-extfile", str(ext),
    )  # fmt: skip
    return cert, key


SERVER_EXT = "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
ELSEWHERE_EXT = "subjectAltName=DNS:zookeeper.elsewhere.example\nextendedKeyUsage=serverAuth\n"
CLIENT_EXT = "extendedKeyUsage=clientAuth\n"


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca = _ca(directory, "test-ca")
    server = _signed(directory, "server", ca, SERVER_EXT)
    client = _signed(directory, "client", ca, CLIENT_EXT)
    other = _ca(directory, "other-ca")
    other_server = _signed(directory, "other-server", other, SERVER_EXT)
    elsewhere = _signed(directory, "elsewhere-server", ca, ELSEWHERE_EXT)
    return Pki(ca[0], *server, *client, other[0], *other_server, *elsewhere)
