"""The behaviour checks against small servers in this process whose pipelining is known: one that
answers both requests sent together, at once or slowly, and one that answers only the first (as
bjoern does). The check waits for the second reply ten times the slowest earlier reply, at least
half a second: it finds a slow server that pipelines, and does not wait its whole timeout for
one that does not."""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from wsgibench.run.checks import PIPELINING_WAIT_S, check
from wsgibench.study.appspec import PROBE_BODY

REPLY = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(PROBE_BODY), PROBE_BODY)


@contextmanager
def _server(delay_s: float, pipelines: bool) -> Iterator[int]:
    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            buf = b""
            while chunk := sock.recv(65536):
                buf += chunk
                heads = buf.count(b"\r\n\r\n")
                buf = buf[buf.rindex(b"\r\n\r\n") + 4 :] if heads else buf
                for _ in range(heads if pipelines else min(heads, 1)):
                    time.sleep(delay_s)
                    sock.sendall(REPLY)
                if b"close" in chunk.lower() or b"HTTP/1.0" in chunk:
                    return

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _timed_check(port: int) -> tuple[bool, str, float]:
    started = time.monotonic()
    caps = check("127.0.0.1", port, timeout_s=2.0)
    assert caps.pong and caps.keep_alive, caps.detail
    return caps.pipelining, caps.detail, time.monotonic() - started


def test_a_server_that_does_not_pipeline_costs_half_a_second_not_the_timeout():
    with _server(0.0, pipelines=False) as port:
        pipelining, detail, took = _timed_check(port)
    assert not pipelining and detail == "pipelining: not all 2 replies within 0.5 s", detail
    assert PIPELINING_WAIT_S <= took < 1.5, took


def test_a_server_that_pipelines_is_found_at_once_or_slowly():
    with _server(0.0, pipelines=True) as port:
        pipelining, detail, took = _timed_check(port)
    assert pipelining, detail
    assert took < PIPELINING_WAIT_S, took
    # 0.12 s a reply: the two pipelined replies take 0.24 s, within ten times the slowest reply
    with _server(0.12, pipelines=True) as port:
        pipelining, detail, _ = _timed_check(port)
    assert pipelining, detail
