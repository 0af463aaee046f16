"""Sans-IO parsing of one HTTP/1.x response from a byte buffer, for probes and behaviour checks."""

from __future__ import annotations

from dataclasses import dataclass


class IncompleteResponse(Exception):
    """Not enough bytes yet."""


class BadResponse(Exception):
    """The bytes are not an HTTP/1.x response."""


class Unframed(TimeoutError):
    """A reply whose end never came: its head says neither Content-Length nor chunked, so only a
    close could end its body, and the server kept the connection open (uWSGI's --http11-socket
    does so for an app that sets no Content-Length, even when the request says close)."""


@dataclass(frozen=True)
class Response:
    version: str
    status: int
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "
    body: bytes

    @property
    def closes(self) -> bool:
        """Whether the server said it will close the connection after this reply."""
        conn = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" not in conn
        return "close" in conn


def parse(buf: bytes, eof: bool = False) -> tuple[Response, int]:
    """Parse the first response in buf; returns it and the bytes it used."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        if len(buf) > 65536 or (eof and buf):
            raise BadResponse("no end of headers")
        raise IncompleteResponse
    head = buf[:end].decode("latin-1").split("\r\n")
    parts = head[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise BadResponse(f"bad status line {head[0][:60]!r}")
    headers: dict[str, str] = {}
    for line in head[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise BadResponse(f"bad header line {line[:60]!r}")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    start = end + 4
    status = int(parts[1])
    if status in (204, 304) or 100 <= status < 200:
        return Response(parts[0], status, headers, b""), start
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body, used = _dechunk(buf, start)
        return Response(parts[0], status, headers, body), used
    if "content-length" in headers:
        length = int(headers["content-length"])
        if len(buf) - start < length:
            raise IncompleteResponse
        return Response(parts[0], status, headers, buf[start : start + length]), start + length
    if not eof:
        raise IncompleteResponse
    return Response(parts[0], status, headers, buf[start:]), len(buf)


def _dechunk(buf: bytes, pos: int) -> tuple[bytes, int]:
    body = bytearray()
    while True:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            raise IncompleteResponse
        try:
            size = int(buf[pos:eol].split(b";")[0], 16)
        except ValueError:
            raise BadResponse("bad chunk size") from None
        pos = eol + 2
        if size == 0:
            trailer_end = buf.find(b"\r\n", pos)
            if trailer_end < 0:
                raise IncompleteResponse
            return bytes(body), trailer_end + 2
        if len(buf) < pos + size + 2:
            raise IncompleteResponse
        body += buf[pos : pos + size]
        pos += size + 2


def request(
    path: str = "/", version: str = "1.1", host: str = "127.0.0.1", close: bool = False
) -> bytes:
    lines = [f"GET {path} HTTP/{version}", f"Host: {host}"]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def unframed(buf: bytes) -> str:
    """What a reply still unfinished at its deadline said, when only a close could have ended it
    (its head complete, no Content-Length, not chunked); "" otherwise."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return ""
    try:
        resp, _ = parse(buf[: end + 4], eof=True)  # the head alone: a framed body is cut short
    except (BadResponse, IncompleteResponse):
        return ""
    framed = (
        "content-length" in resp.headers
        or "chunked" in resp.headers.get("transfer-encoding", "").lower()
    )
    if framed or resp.status in (204, 304) or resp.status < 200:
        return ""
    return (
        f"status {resp.status} with neither Content-Length nor chunked encoding, and the "
        "connection left open (the reply has no end)"
    )
