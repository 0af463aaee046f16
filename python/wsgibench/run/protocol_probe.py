"""What a server speaks beyond HTTP/1.1, judged by what it does before any load: a WebSocket
upgrade accepted (101 with the right Sec-WebSocket-Accept), HTTP/2 with prior knowledge (h2c:
its SETTINGS, then a reply's HEADERS on stream 1) and HTTP/2 chosen by ALPN over TLS. Each probe
says yes or no, and what the server did instead; the behaviour checks store the answers, and a
cell whose load needs what its server lacks is unavailable with that reason, before any load."""

from __future__ import annotations

import base64
import hashlib
import os
import ssl
import struct
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from wsgibench.run import tls

if TYPE_CHECKING:
    from wsgibench.run.checks import Capabilities
    from wsgibench.study.loads import Load

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
H2_FRAMES = {0: "DATA", 1: "HEADERS", 3: "RST_STREAM", 4: "SETTINGS", 6: "PING", 7: "GOAWAY"}


@dataclass(frozen=True)
class Probed:
    ok: bool
    detail: str = ""  # what the server did instead, when not ok


class _Wire:
    """One client connection (TLS when the server serves it) read against a deadline."""

    def __init__(self, host: str, port: int, timeout_s: float, alpn: tuple[str, ...]):
        self.deadline = time.monotonic() + timeout_s
        self.sock = tls.connect(host, port, timeout_s, alpn)
        self.alpn = (
            self.sock.selected_alpn_protocol() if isinstance(self.sock, ssl.SSLSocket) else None
        )
        self.buf = b""

    def fill(self) -> bool:
        """Read more; False at the deadline or when the server closed."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            return False
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(65536)
        except TimeoutError:
            return False
        self.buf += chunk
        return bool(chunk)

    def silence(self) -> str:
        """What the server did when nothing (more) useful came."""
        if self.buf.startswith(b"HTTP/"):
            return f"replied {self.status_line()!r}"
        if time.monotonic() >= self.deadline:
            return "sent nothing in time" if not self.buf else "stopped mid-reply"
        return "closed the connection" if not self.buf else "closed mid-reply"

    def status_line(self) -> str:
        return self.buf.split(b"\r\n", 1)[0].decode("latin-1")

    def close(self) -> None:
        self.sock.close()


def upgrade_request(host: str, port: int, path: str) -> tuple[bytes, bytes]:
    """A WebSocket upgrade of `path` with a fresh key, and the Sec-WebSocket-Accept that RFC 6455
    derives from it."""
    key = base64.b64encode(os.urandom(16))
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key.decode()}\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    ).encode()
    return request, base64.b64encode(hashlib.sha1(key + WS_GUID).digest())


def websocket(host: str, port: int, path: str, timeout_s: float = 2.0) -> Probed:
    """A WebSocket upgrade on `path`: accepted when the server answers 101 with the
    Sec-WebSocket-Accept that RFC 6455 derives from the key sent."""
    request, want = upgrade_request(host, port, path)
    try:
        wire = _Wire(host, port, timeout_s, ("http/1.1",))
    except (OSError, ssl.SSLError) as exc:
        return Probed(False, f"could not connect: {exc}")
    try:
        wire.sock.sendall(request)
        while b"\r\n\r\n" not in wire.buf:
            if not wire.fill():
                return Probed(False, f"to the upgrade, the server {wire.silence()}")
        head = wire.buf.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        status = head[0].split(" ")
        if len(status) < 2 or status[1] != "101":
            return Probed(False, f"the upgrade got {head[0]!r}")
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head)}
        if headers.get("sec-websocket-accept", "").encode() != want:
            return Probed(False, "101 with a wrong Sec-WebSocket-Accept")
        return Probed(True)
    except OSError as exc:
        return Probed(False, f"the upgrade failed: {exc}")
    finally:
        wire.close()


def _h2_request(host: str, port: int, path: str, scheme: str) -> bytes:
    """The preface, empty SETTINGS and one GET on stream 1 (HPACK literals, no Huffman)."""

    def literal(index: int, value: str) -> bytes:  # without indexing, name from the table
        data = value.encode()
        assert len(data) < 127
        return bytes([index, len(data)]) + data

    block = b"\x82" + (b"\x87" if scheme == "https" else b"\x86")
    block += literal(4, path) + literal(1, f"{host}:{port}")
    return (
        H2_PREFACE + _frame(4, 0, 0, b"") + _frame(1, 0x5, 1, block)  # END_HEADERS | END_STREAM
    )


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    head = struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream)
    return head + payload


def http2(host: str, port: int, path: str, timeout_s: float = 2.0) -> Probed:
    """HTTP/2 on a plain connection with prior knowledge (h2c), or over TLS when the server
    serves TLS (then ALPN must choose h2): spoken when the server's first frame is SETTINGS and
    stream 1 gets a reply's HEADERS."""
    try:
        wire = _Wire(host, port, timeout_s, ("h2", "http/1.1"))
    except (OSError, ssl.SSLError) as exc:
        return Probed(False, f"could not connect: {exc}")
    try:
        if tls.endpoint(host, port) is not None and wire.alpn != "h2":
            return Probed(False, f"ALPN chose no h2 (it chose {wire.alpn or 'nothing'})")
        scheme = "https" if wire.alpn else "http"
        wire.sock.sendall(_h2_request(host, port, path, scheme))
        return _h2_reply(wire)
    except OSError as exc:
        return Probed(False, f"HTTP/2 failed: {exc}")
    finally:
        wire.close()


def _h2_reply(wire: _Wire) -> Probed:
    """Read frames until stream 1's HEADERS, a refusal, or the deadline."""
    first = True
    while True:
        if first and wire.buf.startswith(b"HTTP/") and b"\r\n" in wire.buf:
            return Probed(False, f"no SETTINGS: it replied {wire.status_line()!r}")
        if len(wire.buf) < 9 or len(wire.buf) < 9 + int.from_bytes(wire.buf[:3], "big"):
            if not wire.fill():
                said = "no SETTINGS" if first else "SETTINGS, then no reply to a GET"
                return Probed(False, f"{said}: it {wire.silence()}")
            continue
        size, kind = int.from_bytes(wire.buf[:3], "big"), wire.buf[3]
        stream = int.from_bytes(wire.buf[5:9], "big") & 0x7FFF_FFFF
        payload, wire.buf = wire.buf[9 : 9 + size], wire.buf[9 + size :]
        if first and (kind != 4 or stream != 0):
            name = H2_FRAMES.get(kind, f"type {kind}")
            return Probed(False, f"no SETTINGS: its first frame was {name} on stream {stream}")
        first = False
        if kind == 1 and stream == 1:
            return Probed(True)
        if kind == 7:
            code = int.from_bytes(payload[4:8], "big")
            return Probed(False, f"GOAWAY (code {code}) to a GET")
        if kind == 3 and stream == 1:
            return Probed(False, f"RST_STREAM (code {int.from_bytes(payload, 'big')}) to a GET")


def learn(caps: Capabilities, load: Load, host: str, port: int, path: str) -> Capabilities:
    """The behaviour checks' answers with what the load's protocol needs probed and stored."""
    if load.websocket:
        found = websocket(host, port, path)
        return replace(caps, websocket=found.ok, protocol_detail=found.detail)
    if load.protocol in ("h2c", "h2"):
        found = http2(host, port, path)
        if load.tls:
            return replace(caps, h2=found.ok, protocol_detail=found.detail)
        return replace(caps, h2c=found.ok, protocol_detail=found.detail)
    return caps


# What a server lacking each capability is said to lack (the repeats' own judgement in
# run/judge.py says the same when a server changes its mind under load).
LACKS = {
    "websocket": "does not speak WebSocket here",
    "h2c": "does not speak HTTP/2 with prior knowledge (h2c) here",
    "h2": "does not speak HTTP/2 over TLS here",
}


def lacking(load: Load, caps: Capabilities, own_app: str = "") -> str | None:
    """Why the server cannot take this load, from the stored answers; None when it can (or
    nothing was probed). One's own app (`own_app`, as its user named it) may be what refused a
    WebSocket: the reason then names it too."""
    key = "websocket" if load.websocket else ("h2" if load.tls else "h2c")
    if load.protocol == "http" or getattr(caps, key) is not False:
        return None
    why = f"{LACKS[key]}: {caps.protocol_detail} (behaviour check)"
    if key == "websocket" and own_app:
        why += (
            f"; or app {own_app} accepts no WebSocket on the request's path (this load sends "
            "messages on one and waits for each one's echo)"
        )
    return why
