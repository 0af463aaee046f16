"""The WebSocket library an ASGI server really runs, read back rather than assumed: one WebSocket
connection to the ws_echo app's runtime path, whose one message names the modules on the stack
of the server's call into the app."""

from __future__ import annotations

import json
import socket

from wsgibench.run import protocol_probe, tls
from wsgibench.run.checks import RUNTIME_PATH

# Markers of a server's WebSocket implementation among those modules, first match wins.
LIBRARIES = (
    ("uvicorn.protocols.websockets.websockets_sansio_impl", "websockets (sans-I/O)"),
    ("uvicorn.protocols.websockets.websockets_impl", "websockets"),
    ("uvicorn.protocols.websockets.wsproto_impl", "wsproto"),
    ("hypercorn.protocol.ws_stream", "wsproto"),
    ("daphne.ws_protocol", "autobahn"),
    ("autobahn", "autobahn"),
)
# No Python WebSocket library on the stack nor imported: the server's own, in native code
# (Granian's Rust).
NATIVE = "the server's own (native code: no Python WebSocket library imported)"


def library_of(modules: list[str], loaded: list[str]) -> str:
    """From the stack when the server calls the app from its protocol code (uvicorn), else from
    the libraries its process imported (Hypercorn, Daphne run the app in a task of its own)."""
    joined = " ".join(modules)
    on_stack = next((name for marker, name in LIBRARIES if marker in joined), None)
    return on_stack or (", ".join(loaded) if loaded else NATIVE)


class _Reader:
    """Exact reads from a socket whose first bytes (`first`) were already received."""

    def __init__(self, sock: socket.socket, first: bytes) -> None:
        self._sock, self._buf = sock, first

    def exact(self, n: int) -> bytes:
        while len(self._buf) < n:
            chunk = self._sock.recv(max(4096, n - len(self._buf)))
            if not chunk:
                raise ConnectionError("closed")
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def first_message(self) -> bytes:
        """The payload of the server's first frame (unmasked, as servers send)."""
        _, b1 = self.exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(self.exact(2), "big")
        elif n == 127:
            n = int.from_bytes(self.exact(8), "big")
        return self.exact(n)


def websocket_library(host: str, port: int, timeout_s: float = 2.0) -> str | None:
    """The library that ran the app's WebSocket connection, or None when the upgrade failed."""
    request, _accept = protocol_probe.upgrade_request(host, port, RUNTIME_PATH)
    try:
        with tls.connect(host, port, timeout_s) as sock:
            sock.sendall(request)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = sock.recv(4096)
                if not chunk:
                    return None
                head += chunk
            if not head.startswith(b"HTTP/1.1 101"):
                return None
            rest = head.split(b"\r\n\r\n", 1)[1]
            seen = json.loads(_Reader(sock, rest).first_message())
        return library_of(
            [str(m) for m in seen.get("modules", [])], [str(m) for m in seen.get("loaded", [])]
        )
    except (OSError, ValueError, ConnectionError):
        return None
