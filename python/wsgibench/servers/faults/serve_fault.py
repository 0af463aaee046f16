"""A tiny HTTP/1.1 "Pong!" server that injects one fault; standard library only.

Run by the `fault-*` catalog entries with wsgibench's own interpreter (no venv). It answers like the
pong app (HTTP/1.0 and 1.1, keep-alive, pipelining) until its fault says otherwise. Requests are
counted over the whole process: wsgibench's readiness probe and behaviour checks use about 8, so
faults that start `--after N` requests (N > 8) hit the measured load, not the checks.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import selectors
import signal
import socket
import sys
import threading
import time

BODY = b"Pong!"
KINDS = (
    "ok",
    "crash",
    "hang",
    "slow",
    "error500",
    "garbage",
    "wrongbody",
    "reset",
    "closeka",
    "leak",
    "refuse",
    "port",
    "sigterm",
    "counted",
    "fixed-service",
    "busy-threads",
    "timeout-some",
)


class State:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.lock = threading.Lock()
        self.requests = 0
        self.active = 0
        self.rng = random.Random(args.seed)
        self.started = time.time()
        self.leaked: list[bytes] = []
        self.leaked_mb = 0
        self.held: list[socket.socket] = []
        self.by_peer: dict[str, int] = {}  # replies sent, by the client's address

    def replied(self, peer: str) -> None:
        with self.lock:
            self.by_peer[peer] = self.by_peer.get(peer, 0) + 1

    def write_counts(self, name: str = "replies") -> None:
        """counted: the replies it sent to each client address (timeout-some: also the requests
        it held unanswered), into $WSGIBENCH_REPLY_COUNTS."""
        folder = os.environ.get("WSGIBENCH_REPLY_COUNTS")
        if folder:
            with self.lock:
                text = json.dumps(
                    {"started": self.started, "by_peer": self.by_peer, "held": len(self.held)}
                )
            path = os.path.join(folder, f"{name}-{os.getpid()}.json")
            with open(path + ".tmp", "w") as f:
                f.write(text)
            os.replace(path + ".tmp", path)

    def count(self) -> int:
        with self.lock:
            self.requests += 1
            if self.args.kind == "crash" and self.requests > self.args.after:
                # Under the lock: the first request past the limit ends the process before any
                # other thread can count one more (so the log names exactly request after+1).
                print(f"fault: crashing at request {self.requests}", file=sys.stderr, flush=True)
                os._exit(3)
            return self.requests


def _reply(status: str, body: bytes, keep_alive: bool) -> bytes:
    head = [f"HTTP/1.1 {status}", "Content-Type: text/plain", f"Content-Length: {len(body)}"]
    if not keep_alive:
        head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def _read_request(rfile) -> tuple[str, bool] | None:
    """(request line, keep-alive wanted), or None at the end of the stream."""
    line = rfile.readline(65537)
    while line in (b"\r\n", b"\n"):
        line = rfile.readline(65537)
    if not line:
        return None
    parts = line.decode("latin-1").split()
    version = parts[2] if len(parts) == 3 else "HTTP/1.0"
    connection, length = "", 0
    while True:
        h = rfile.readline(65537)
        if h in (b"\r\n", b"\n", b""):
            break
        name, _, value = h.decode("latin-1").partition(":")
        if name.strip().lower() == "connection":
            connection = value.strip().lower()
        elif name.strip().lower() == "content-length":
            length = int(value.strip() or 0)
    if length:
        rfile.read(length)
    keep = "keep-alive" in connection if version == "HTTP/1.0" else "close" not in connection
    return line.decode("latin-1").strip(), keep


def _reset(conn: socket.socket) -> None:
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    conn.close()


def serve_connection(conn: socket.socket, st: State) -> None:
    a = st.args
    peer = conn.getpeername()[0]
    with st.lock:
        st.active += 1
    try:
        if a.kind == "hang" and st.requests >= a.after:
            st.held.append(conn)  # accepted, never read, never answered, never closed
            return
        rfile = conn.makefile("rb")
        while True:
            req = _read_request(rfile)
            if req is None:
                break
            _, keep = req
            n = st.count()
            late = n > a.after  # the fault is active from request after+1 on
            if (a.kind == "hang" and late) or (a.kind == "timeout-some" and n % a.every == 0):
                st.held.append(conn)  # this request is never answered: its client times out
                return
            if a.kind in ("slow", "counted"):
                time.sleep(a.delay)
            if a.kind == "reset" and late:
                _reset(conn)
                return
            if a.kind == "garbage" and late:
                conn.sendall(b"\x00\xff\xfeNOT HTTP AT ALL\x07" + os.urandom(32) + b"\r\n\r\n")
                conn.close()
                return
            if a.kind == "leak":
                with st.lock:
                    if st.leaked_mb < a.leak_cap_mb:
                        st.leaked.append(b"\x01" * (a.mb * 2**20))  # touched: counts in RSS
                        st.leaked_mb += a.mb
            status, body = "200 OK", BODY
            if a.kind == "error500" and st.active > 1:  # under load: several connections at once
                status, body = "500 Internal Server Error", b"overloaded"
            if a.kind == "wrongbody" and n % a.every == 0:
                body = b"Pang!"
            conn.sendall(_reply(status, body, keep))
            st.replied(peer)
            if not keep:
                break
            if a.kind == "closeka" and late:
                with st.lock:
                    drop = st.rng.random() < a.probability
                if drop:  # close a keep-alive connection without saying so
                    break
    except OSError:
        pass
    finally:
        with st.lock:
            st.active -= 1
        if conn not in st.held:
            try:
                conn.close()
            except OSError:
                pass


def busy_threads(count: int) -> None:
    """Start `count` threads that hash 256 KiB blocks forever, named "busy" (prctl PR_SET_NAME).
    hashlib releases the GIL on blocks this size, so they use up to `count` cores between them:
    a server whose threading shape is known (cores used = min(count, CPUs allowed))."""
    import ctypes
    import hashlib

    libc = ctypes.CDLL(None)
    block = b"x" * 262_144

    def spin() -> None:
        libc.prctl(15, b"busy", 0, 0, 0)  # PR_SET_NAME: this thread's comm
        while True:
            hashlib.sha256(block).digest()

    for _ in range(count):
        threading.Thread(target=spin, daemon=True).start()


class FixedService:
    """fixed-service: one thread serves the requests one at a time, in the order they arrive, each
    taking `service` seconds, so the server's capacity is 1 / service.

    Every request gets the service a single FIFO server would give it: it starts at max(when it
    arrived, when the one before it ended) and its reply leaves at that start + service. While a
    request is in service the thread waits in select(), so arrivals are read (and timed) as they
    come; a late wake-up is not carried into the next request, so a backlogged server answers
    exactly 1 / service requests per second (while reading and sending take less than that)."""

    def __init__(self, listener: socket.socket, service: float):
        self.listener = listener
        self.service = service
        self.sel = selectors.DefaultSelector()
        self.buffers: dict[socket.socket, bytes] = {}
        self.queue = collections.deque()  # (conn, keep-alive, when it arrived)
        self.busy = None  # (conn, keep-alive) of the request in service
        self.ends = 0.0  # when the request in service (or the last one) ends
        listener.setblocking(False)
        self.sel.register(listener, selectors.EVENT_READ)

    def run(self) -> None:
        while True:
            if self.busy is None and self.queue:
                conn, keep, arrived = self.queue.popleft()
                self.busy = (conn, keep)
                self.ends = max(arrived, self.ends) + self.service
            if self.busy is None:
                self.poll(None)
                continue
            left = self.ends - time.monotonic()
            if left > 0.001:  # select() wakes up to 1 ms late: the rest is slept
                self.poll(left - 0.001)
                continue
            if left > 0:
                time.sleep(left)
            self.answer(*self.busy)
            self.busy = None

    def poll(self, timeout: float | None) -> None:
        for key, _ in self.sel.select(timeout):
            if key.fileobj is self.listener:
                self.accept()
            else:
                self.read(key.fileobj)

    def accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.settimeout(1.0)  # a send to a client that stopped reading cannot hold the server
        self.buffers[conn] = b""
        self.sel.register(conn, selectors.EVENT_READ)

    def read(self, conn: socket.socket) -> None:
        try:
            data = conn.recv(65536)
        except OSError:
            data = b""
        if not data:  # the client is gone: nobody waits for its queued requests
            self.drop(conn)
            return
        buf = (self.buffers[conn] + data).lstrip(b"\r\n")
        now = time.monotonic()
        while (parsed := _parse(buf)) is not None:
            keep, used = parsed
            buf = buf[used:].lstrip(b"\r\n")
            self.queue.append((conn, keep, now))
        self.buffers[conn] = buf

    def answer(self, conn: socket.socket, keep: bool) -> None:
        if conn not in self.buffers:
            return  # the client left while its request was in service
        try:
            conn.sendall(_reply("200 OK", BODY, keep))
        except OSError:
            keep = False
        if not keep:
            self.drop(conn)

    def drop(self, conn: socket.socket) -> None:
        if self.buffers.pop(conn, None) is None:
            return
        self.sel.unregister(conn)
        self.queue = collections.deque(q for q in self.queue if q[0] is not conn)
        conn.close()


def _parse(buf: bytes) -> tuple[bool, int] | None:
    """(keep-alive wanted, bytes used) of the first whole request in buf, or None."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = buf[:end].decode("latin-1").split("\r\n")
    parts = lines[0].split()
    version = parts[2] if len(parts) == 3 else "HTTP/1.0"
    headers = {}
    for h in lines[1:]:
        name, _, value = h.partition(":")
        headers[name.strip().lower()] = value.strip().lower()
    used = end + 4 + int(headers.get("content-length") or 0)
    if len(buf) < used:
        return None
    connection = headers.get("connection", "")
    keep = "keep-alive" in connection if version == "HTTP/1.0" else "close" not in connection
    return keep, used


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--kind", choices=KINDS, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--backlog", type=int, default=128)
    p.add_argument("--after", type=int, default=20, help="requests answered before the fault")
    p.add_argument("--every", type=int, default=10, help="wrongbody: every Nth response")
    p.add_argument("--delay", type=float, default=0.3, help="slow: seconds before each reply")
    p.add_argument("--probability", type=float, default=0.3, help="closeka: per response")
    p.add_argument("--mb", type=int, default=4, help="leak: MB kept per request")
    p.add_argument("--leak-cap-mb", type=int, default=2048, help="leak: stop leaking here")
    p.add_argument("--seed", type=int, default=4)
    p.add_argument("--service-ms", type=float, default=5.0, help="fixed-service: ms per request")
    p.add_argument("--busy", type=int, default=4, help="busy-threads: threads that hash forever")
    a = p.parse_args(argv)
    if a.kind == "refuse":
        print(
            "fault: refusing to start (configuration error injected)", file=sys.stderr, flush=True
        )
        sys.exit(1)
    if a.kind == "sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    other = None
    if a.kind == "port":  # another server holds the port first; ours then cannot bind it
        other = socket.socket()
        other.bind((a.host, a.port))
        other.listen(1)
    s = socket.socket()
    if a.kind != "port":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind((a.host, a.port))
    except OSError as exc:
        print(
            f"fault: cannot listen on {a.host}:{a.port}: {exc.strerror}",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(1)
    s.listen(a.backlog)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    st = State(a)
    if a.kind in ("counted", "timeout-some"):

        def stop(signum, frame):
            st.write_counts("replies" if a.kind == "counted" else "held")
            os._exit(0)

        signal.signal(signal.SIGTERM, stop)
    print(f"fault {a.kind} listening on {a.host}:{a.port} (pid {os.getpid()})", flush=True)
    if a.kind == "fixed-service":
        FixedService(s, a.service_ms / 1000).run()
    if a.kind == "busy-threads":
        busy_threads(a.busy)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve_connection, args=(conn, st), daemon=True).start()


if __name__ == "__main__":
    main()
