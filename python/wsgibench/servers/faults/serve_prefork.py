"""A pre-fork "Pong!" server whose workers die under load while the master lives; standard library
only.

The master listens, forks `--workers` workers that accept on its socket, and forks a replacement
for each worker that dies, as gunicorn's arbiter does. Each worker answers like the pong app
(HTTP/1.0 and 1.1, keep-alive) and, after `--after` requests of its own, dies as `--death` says:
`exit` (exit status 1), `signal` (SIGSEGV), `oom` (allocates until the memory limit's OOM killer
kills it), `stuck` (stops: the master's worker timeout kills it with SIGKILL and logs
"WORKER TIMEOUT (pid:N)", as gunicorn's does). At SIGTERM the master writes how many workers died
and how to $WSGIBENCH_REPLY_COUNTS/deaths-PID.json (the tests' ground truth), then stops them.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time

# Run as a script: its own folder is on sys.path, and serve_fault.py reads requests the same way.
from serve_fault import _read_request

BODY = b"Pong!"
DEATHS = ("exit", "signal", "oom", "stuck")


def _reply(keep: bool) -> bytes:
    head = ["HTTP/1.1 200 OK", "Content-Type: text/plain", f"Content-Length: {len(BODY)}"]
    if not keep:
        head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + BODY


def _read(rfile) -> bool | None:
    """Keep-alive wanted, or None at the end of the stream (serve_fault's reading)."""
    req = _read_request(rfile)
    return None if req is None else req[1]


class Worker:
    def __init__(self, args: argparse.Namespace, listener: socket.socket, heartbeat: str):
        self.args = args
        self.listener = listener
        self.heartbeat = heartbeat
        self.lock = threading.Lock()
        self.served = 0

    def run(self) -> None:
        threading.Thread(target=self.beat, daemon=True).start()
        while True:
            conn, _ = self.listener.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def beat(self) -> None:
        while True:
            with open(self.heartbeat, "w") as f:
                f.write(str(time.monotonic()))
            time.sleep(0.05)

    def serve(self, conn: socket.socket) -> None:
        rfile = conn.makefile("rb")
        try:
            while (keep := _read(rfile)) is not None:
                with self.lock:
                    self.served += 1
                    due = self.served > self.args.after
                if due:
                    self.die()
                conn.sendall(_reply(keep))
                if not keep:
                    break
        except OSError:
            pass
        finally:
            conn.close()

    def die(self) -> None:
        how = self.args.death
        print(f"worker {os.getpid()}: dying ({how})", file=sys.stderr, flush=True)
        if how == "exit":
            os._exit(1)
        if how == "signal":  # Python leaves SIGSEGV at its default: the process ends by it
            os.kill(os.getpid(), signal.SIGSEGV)
        if how == "oom":
            # this worker, not its master, is the OOM killer's first choice (as a real worker
            # that leaks is: the largest; said outright so that a small limit never picks another)
            _oom_score_adj(1000)
            hoard = []
            while True:  # the memory limit's OOM killer ends this
                hoard.append(b"\x01" * (64 * 2**20))
        if how == "stuck":
            os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(3600)


def _oom_score_adj(value: int) -> None:
    """This process's OOM score adjustment, where it may be set (lowering it needs root)."""
    try:
        with open("/proc/self/oom_score_adj", "w") as adj:
            adj.write(str(value))
    except OSError:
        pass


class Master:
    def __init__(self, args: argparse.Namespace, listener: socket.socket):
        self.args = args
        self.listener = listener
        self.workers: dict[int, str] = {}  # pid -> its heartbeat file
        self.deaths: dict[str, int] = {}
        self.folder = os.environ.get("WSGIBENCH_REPLY_COUNTS") or ""
        self.beats = args.heartbeats

    def spawn(self) -> None:
        beat = os.path.join(self.beats, f"hb-{len(self.workers)}-{time.monotonic_ns()}")
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _oom_score_adj(0)  # a worker is as any process again (raising it needs no right)
            Worker(self.args, self.listener, beat).run()
            os._exit(0)
        self.workers[pid] = beat

    def run(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        # The master is never the OOM killer's choice where it may say so (root): with several
        # workers dying of `oom` at once, the kernel, having skipped the ones already killed,
        # once picked the master (the server then crashed, not a worker death).
        _oom_score_adj(-1000)
        for _ in range(self.args.workers):
            self.spawn()
        while True:
            self.reap()
            if self.args.death == "stuck":  # the others' deaths are their own, not a timeout's
                self.time_out()
            time.sleep(0.02)

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.workers.pop(pid, None)
            how = (
                f"signal {os.WTERMSIG(status)}"
                if os.WIFSIGNALED(status)
                else f"exit {os.WEXITSTATUS(status)}"
            )
            self.deaths[how] = self.deaths.get(how, 0) + 1
            print(f"master: worker {pid} died ({how}), forking another", flush=True)
            self.spawn()

    def time_out(self) -> None:
        """A worker whose heartbeat stopped for longer than the worker timeout is killed."""
        now = time.monotonic()
        for pid, beat in list(self.workers.items()):
            try:
                last = float(open(beat).read() or now)
            except (OSError, ValueError):
                continue
            if now - last > self.args.worker_timeout:
                print(f"[CRITICAL] WORKER TIMEOUT (pid:{pid})", flush=True)
                os.kill(pid, signal.SIGKILL)
                os.remove(beat)

    def stop(self, signum, frame) -> None:
        # Not reaped here: the group's SIGTERM reaches the workers too, and those ends are the
        # stop's, not deaths under load.
        if self.folder:
            path = os.path.join(self.folder, f"deaths-{os.getpid()}.json")
            with open(path + ".tmp", "w") as f:
                json.dump({"deaths": sum(self.deaths.values()), "how": self.deaths}, f)
            os.replace(path + ".tmp", path)
        for pid in self.workers:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(0)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--death", choices=DEATHS, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--backlog", type=int, default=128)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--after", type=int, default=300, help="requests a worker serves, then dies")
    p.add_argument("--worker-timeout", type=float, default=0.5, help="stuck: seconds")
    p.add_argument("--heartbeats", default=".", help="folder of the workers' heartbeat files")
    a = p.parse_args(argv)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a.host, a.port))
    s.listen(a.backlog)
    print(
        f"prefork fault ({a.death}) listening on {a.host}:{a.port} (pid {os.getpid()})", flush=True
    )
    Master(a, s).run()


if __name__ == "__main__":
    main()
