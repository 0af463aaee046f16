"""TLS for the servers a cell starts: one test CA per process (trustme), a certificate for the
server's host written to the cell's scratch directory and handed to the server in its own way,
and the table of TLS endpoints by address that the behaviour checks and the engine plan read."""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import trustme


@dataclass(frozen=True)
class TlsFiles:
    """The certificate a server serves, its key, and the CA that signed it (PEM text: what the
    engine's plan carries to any load host)."""

    cert: Path
    key: Path
    ca_pem: str

    def client_context(self, alpn: tuple[str, ...] = ("http/1.1",)) -> ssl.SSLContext:
        """A client that trusts only the test CA, TLS 1.3 as the engine speaks it."""
        ctx = ssl.create_default_context(cadata=self.ca_pem)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.set_alpn_protocols(list(alpn))
        return ctx


@cache
def _ca() -> trustme.CA:
    # Imported here: trustme and cryptography cost every start of the CLI a tenth of a second.
    import trustme

    return trustme.CA(organization_name="wsgibench test CA")


def make_files(workdir: Path, host: str) -> TlsFiles:
    """A certificate for `host` (and localhost) signed by the test CA, in `workdir/tls`."""
    folder = workdir / "tls"
    folder.mkdir(exist_ok=True)
    names = dict.fromkeys((host, "localhost", "127.0.0.1"))
    issued = issued_cert(tuple(names))
    cert, key = folder / "cert.pem", folder / "key.pem"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    # Servers that drop privileges (nginx workers) must read them.
    for f in (folder, cert, key):
        f.chmod(0o755 if f.is_dir() else 0o644)
    return TlsFiles(cert, key, _ca().cert_pem.bytes().decode())


@cache
def issued_cert(names: tuple[str, ...]) -> trustme.LeafCert:
    return _ca().issue_cert(*names)


_ENDPOINTS: dict[tuple[str, int], TlsFiles] = {}


def serve(host: str, port: int, files: TlsFiles) -> None:
    """The server on host:port speaks TLS with these files (until `forget`)."""
    _ENDPOINTS[(host, port)] = files


def forget(host: str, port: int) -> None:
    _ENDPOINTS.pop((host, port), None)


def endpoint(host: str, port: int) -> TlsFiles | None:
    """The TLS files of the server on host:port; None: it speaks plain TCP."""
    return _ENDPOINTS.get((host, port))


def connect(
    host: str, port: int, timeout_s: float, alpn: tuple[str, ...] = ("http/1.1",)
) -> socket.socket:
    """A client connection to host:port (no Nagle), over TLS with its certificate verified when
    the server there was started with TLS."""
    sock = socket.create_connection((host, port), timeout=timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    files = endpoint(host, port)
    if files is None:
        return sock
    return files.client_context(alpn).wrap_socket(sock, server_hostname=host)
