"""TLS contexts, shared by every listener and client of reassignd: the HTTP API (``--tls-cert``,
``--tls-key``, ``--tls-client-ca``), the Kafka listener (``--kafka-tls-*``) and the clients of the
HTTP API (``--ca-file``, ``--cert-file``, ``--key-file``). No layer: only the standard library.

Servers speak TLS 1.2 or newer. Clients always verify the server's certificate and host name,
against the system's CAs or the ``ca_file`` given; there is no switch to turn verification off.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass


def server_context(cert_file: str, key_file: str, client_ca_file: str | None = None) -> ssl.SSLContext:
    """A server's context; with ``client_ca_file`` every client must present a certificate that
    CA signed (mutual TLS). Raises OSError or ssl.SSLError for files that cannot be used."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_file, key_file)
    if client_ca_file is not None:
        context.load_verify_locations(cafile=client_ca_file)
        context.verify_mode = ssl.CERT_REQUIRED
    return context


@dataclass(frozen=True, slots=True)
class ClientTls:
    """What a client of the HTTP API verifies with and presents: ``ca_file`` (None: the system's
    CAs) and, for a server that asks for one (mutual TLS), a certificate and its key."""

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    def problem(self) -> str | None:
        """Why these settings cannot make a context (one line), or None."""
        if (self.cert_file is None) != (self.key_file is None):
            return "give both --cert-file and --key-file, or neither"
        try:
            self.context()
        except (OSError, ssl.SSLError) as e:
            return f"cannot load the TLS files ({self.describe()}): {e}"
        return None

    def describe(self) -> str:
        named = [("--ca-file", self.ca_file), ("--cert-file", self.cert_file), ("--key-file", self.key_file)]
        return ", ".join(f"{flag} {path}" for flag, path in named if path is not None) or "system CAs"

    def context(self) -> ssl.SSLContext:
        """A verifying client context. Raises OSError or ssl.SSLError for unusable files."""
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=self.ca_file)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if self.cert_file is not None and self.key_file is not None:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context

    @property
    def default(self) -> bool:
        """Nothing given: the HTTP library's own verifying defaults apply."""
        return self.ca_file is None and self.cert_file is None and self.key_file is None


SYSTEM_CAS = ClientTls()  # verify against the system's CAs, present no certificate

CA_FILE_HELP = "PEM file of the CA(s) that signed the controller's certificate (default: the system's)"
CERT_FILE_HELP = "PEM client certificate, for a controller that requires one (--tls-client-ca)"
KEY_FILE_HELP = "PEM private key of --cert-file"
