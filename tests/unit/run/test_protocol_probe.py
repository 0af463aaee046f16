"""The protocol probes of the behaviour checks against small servers on free loopback ports
that answer as real ones do (an h2c server, an HTTP/1.1-only one, a WebSocket endpoint with a
right and a wrong accept key, one that refuses) and the verdict a cell draws from them."""

from __future__ import annotations

import base64
import hashlib
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from wsgibench.run import protocol_probe
from wsgibench.run.checks import Capabilities
from wsgibench.study.loads import Load

Reply = Callable[[bytes], bytes | None]  # the request bytes so far → what to send (None: wait)


@contextmanager
def serving(reply: Reply) -> Iterator[int]:
    """One-connection-at-a-time server: reads until `reply` has an answer, sends it, then
    keeps the connection open until the client closes (an empty answer: it closes at once)."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen()
    lsock.settimeout(5)

    def run() -> None:
        while True:
            try:
                conn, _ = lsock.accept()
            except OSError:
                return
            with conn:
                got = b""
                while (answer := reply(got)) is None:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    got += chunk
                if not answer:  # b"": close at once
                    continue
                conn.sendall(answer)
                while conn.recv(4096):
                    pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield lsock.getsockname()[1]
    finally:
        lsock.close()


def load(protocol: str) -> Load:
    return Load(name=protocol, model="closed", levels=(1,), params={}, protocol=protocol)


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (
        struct.pack(">I", len(payload))[1:]
        + bytes([kind, flags])
        + struct.pack(">I", stream)
        + payload
    )


def after(marker: bytes, answer: bytes) -> Reply:
    return lambda got: answer if marker in got else None


def h2_server(answer: bytes) -> Reply:
    # The whole preface, SETTINGS and HEADERS frame the probe sends.
    return lambda got: answer if got.count(b"\x00\x00\x00\x00") and len(got) > 24 + 9 + 9 else None


def test_h2c_is_found_by_settings_then_a_reply_on_stream_1():
    answer = frame(4, 0, 0) + frame(4, 1, 0) + frame(1, 4, 1, b"\x88")
    with serving(h2_server(answer)) as port:
        assert protocol_probe.http2("127.0.0.1", port, "/") == protocol_probe.Probed(True)


def test_an_http1_server_is_said_to_reply_with_its_status_line():
    with serving(
        after(b"\r\n\r\n", b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    ) as port:
        found = protocol_probe.http2("127.0.0.1", port, "/", timeout_s=1.0)
    assert found == protocol_probe.Probed(
        False, "no SETTINGS: it replied 'HTTP/1.1 400 Bad Request'"
    )


def test_a_server_that_closes_or_stays_silent_is_said_so():
    with serving(lambda got: b"" if got else None) as port:
        found = protocol_probe.http2("127.0.0.1", port, "/", timeout_s=1.0)
    assert found.detail == "no SETTINGS: it closed the connection"
    with serving(lambda got: None) as port:
        found = protocol_probe.http2("127.0.0.1", port, "/", timeout_s=0.3)
    assert found.detail == "no SETTINGS: it sent nothing in time"


def test_settings_then_goaway_or_a_reset_is_not_http2_for_the_load():
    goaway = frame(4, 0, 0) + frame(7, 0, 0, struct.pack(">II", 0, 1))
    with serving(h2_server(goaway)) as port:
        assert protocol_probe.http2("127.0.0.1", port, "/").detail == "GOAWAY (code 1) to a GET"
    reset = frame(4, 0, 0) + frame(3, 0, 1, struct.pack(">I", 7))
    with serving(h2_server(reset)) as port:
        assert protocol_probe.http2("127.0.0.1", port, "/").detail == "RST_STREAM (code 7) to a GET"
    first = frame(6, 0, 0, b"12345678")
    with serving(h2_server(first)) as port:
        found = protocol_probe.http2("127.0.0.1", port, "/")
    assert found.detail == "no SETTINGS: its first frame was PING on stream 0"


def accept_for(got: bytes) -> bytes:
    key = next(
        line.split(b":", 1)[1].strip()
        for line in got.split(b"\r\n")
        if line.lower().startswith(b"sec-websocket-key:")
    )
    return base64.b64encode(hashlib.sha1(key + protocol_probe.WS_GUID).digest())


def upgrade(accept: Callable[[bytes], bytes]) -> Reply:
    def reply(got: bytes) -> bytes | None:
        if b"\r\n\r\n" not in got:
            return None
        return (
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + accept(got) + b"\r\n\r\n"
        )

    return reply


def test_a_websocket_upgrade_needs_101_and_the_right_accept_key():
    with serving(upgrade(accept_for)) as port:
        assert protocol_probe.websocket("127.0.0.1", port, "/ws").ok
    with serving(upgrade(lambda _got: b"AAAA")) as port:
        found = protocol_probe.websocket("127.0.0.1", port, "/ws")
    assert found == protocol_probe.Probed(False, "101 with a wrong Sec-WebSocket-Accept")
    refused = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"
    with serving(after(b"\r\n\r\n", refused)) as port:
        found = protocol_probe.websocket("127.0.0.1", port, "/ws")
    assert found.detail == "the upgrade got 'HTTP/1.1 403 Forbidden'"


def test_the_load_says_what_is_probed_and_what_is_lacking():
    caps = Capabilities(True, True, True, True, "")
    with serving(
        after(b"\r\n\r\n", b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    ) as port:
        ws = protocol_probe.learn(caps, load("websocket"), "127.0.0.1", port, "/ws")
    assert (ws.websocket, ws.h2c, ws.h2) == (False, None, None)
    assert protocol_probe.lacking(load("websocket"), ws) == (
        "does not speak WebSocket here: the upgrade got 'HTTP/1.1 404 Not Found' (behaviour check)"
    )
    assert protocol_probe.lacking(load("websocket"), ws, "svc.py:app").endswith(
        "(behaviour check); or app svc.py:app accepts no WebSocket on the request's path (this "
        "load sends messages on one and waits for each one's echo)"
    )  # one's own app may be what refused it
    # An HTTP load probes nothing and lacks nothing; a load whose protocol was found lacks none.
    assert protocol_probe.learn(caps, load("http"), "127.0.0.1", 1, "/") is caps
    assert protocol_probe.lacking(load("http"), ws) is None
    found = Capabilities(True, True, True, True, "", h2c=True)
    assert protocol_probe.lacking(load("h2c"), found) is None
    assert protocol_probe.lacking(load("h2c"), caps) is None  # not probed


def test_a_wrong_answer_that_will_not_change_is_final_when_settled():
    # A 5xx is what a proxy says until its upstream is up: not final, unless the server is known
    # to keep giving it (one's own app on a server that runs no lifespan: run/serve.py).
    from wsgibench.machine.process import Probed
    from wsgibench.run import checks
    from wsgibench.study.appspec import Probe

    reply = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\ncold"
    with serving(after(b"\r\n\r\n", reply)) as port:
        first = checks.probe("127.0.0.1", port, Probe(path="/", body=None), hint=" (why)")
        settled = checks.probe("127.0.0.1", port, Probe(path="/", body=None), settled=True)
    assert first == Probed(False, "status 500, body b'cold' (why)", final=False)
    assert (settled.ready, settled.final) == (False, True)
