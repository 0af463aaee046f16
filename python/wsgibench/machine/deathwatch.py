"""Every process of a server's tree that exits or appears while a repeat runs, with its exit status
or signal: from the kernel's process events (the netlink proc connector, which reports a process's
exit status to whoever listens, not only to its parent), else by polling the tree."""

from __future__ import annotations

import os
import select
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# linux/connector.h, linux/cn_proc.h
_NETLINK_CONNECTOR = 11
_CN_IDX_PROC = 1
_CN_VAL_PROC = 1
_PROC_CN_MCAST_LISTEN = 1
_PROC_CN_MCAST_IGNORE = 2
_PROC_EVENT_FORK = 0x00000001
_PROC_EVENT_EXIT = 0x80000000
_NLMSG_DONE = 3
_NL_HDR = struct.Struct("=IHHII")  # nlmsghdr: len, type, flags, seq, pid
_CN_HDR = struct.Struct("=IIIIHH")  # cn_msg: idx, val, seq, ack, len, flags
_EV_HDR = struct.Struct("=IIQ")  # proc_event: what, cpu, timestamp_ns
_FORK = struct.Struct("=IIII")  # parent pid, parent tgid, child pid, child tgid
_EXIT = struct.Struct("=IIII")  # pid, tgid, exit_code (a wait status), exit_signal
_EVENTS_AT = _NL_HDR.size + _CN_HDR.size
POLL_S = 0.05  # the fallback's look at the tree


@dataclass(frozen=True)
class Exit:
    """One process of the server's tree that ended: when (wall clock), and how."""

    pid: int
    at_unix_s: float
    status: int | None  # exit status when it exited; None when killed or unknown
    signal: int | None  # the signal that killed it
    oom: bool = False  # the memory cgroup's OOM killer (told by the group's oom_kill count)
    timed_out: bool = False  # killed by the server's own worker timeout (its log says so)

    @property
    def how(self) -> str:
        if self.oom:
            return "OOM kill under the memory limit"
        if self.timed_out:
            return "killed by the server's own worker timeout"
        if self.signal is not None:
            return f"killed by {_signal_name(self.signal)}"
        if self.status is not None:
            return f"exit status {self.status}"
        return "exit status unknown (seen gone)"

    def as_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "at_unix_s": round(self.at_unix_s, 3),
            "status": self.status,
            "signal": self.signal,
            "oom": self.oom,
            "timed_out": self.timed_out,
            "how": self.how,
        }


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def decode_status(wait_status: int) -> tuple[int | None, int | None]:
    """(exit status, signal) of a wait status as the kernel reports it."""
    if os.WIFSIGNALED(wait_status):
        return None, os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status), None


@dataclass
class Deaths:
    """What the watch saw: the processes that exited (the server's tree), those that appeared,
    and how it watched ("kernel process events" or "polling every 50 ms")."""

    exits: list[Exit] = field(default_factory=list)
    appeared: int = 0
    source: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "exits": [e.as_dict() for e in self.exits],
            "appeared": self.appeared,
            "source": self.source,
        }


class DeathWatch:
    """Watches the tree of `roots()` (the server's live processes) from `start()` to `stop()`.
    Listening to the proc connector needs CAP_NET_ADMIN; without it the tree is polled (exits
    seen, their status read from a zombie's /proc/PID/stat when it is still there)."""

    def __init__(self, roots: Callable[[], list[int]]):
        self._roots = roots
        self._members: set[int] = set()
        self._deaths = Deaths()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        self._sock = _listen()
        # After listening: a process forked between the look and the listen is still caught.
        self._members = set(self._roots())
        self._deaths.source = "kernel process events" if self._sock else "polling every 50 ms"
        loop = self._events if self._sock else self._poll
        self._thread = threading.Thread(target=loop, name="wsgibench-deathwatch", daemon=True)
        self._thread.start()

    def stop(self) -> Deaths:
        time.sleep(0.05)  # events of the last moments still in the socket's queue
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._sock is not None:
            self._sock.close()
        return self._deaths

    def _events(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            ready, _, _ = select.select([self._sock], [], [], 0.05)
            if not ready:
                continue
            try:
                data = self._sock.recv(65536)
            except OSError:
                return
            for what, body in _proc_events(data):
                self._event(what, body)

    def _event(self, what: int, body: bytes) -> None:
        if what == _PROC_EVENT_FORK:
            _, parent_tgid, child_pid, child_tgid = _FORK.unpack_from(body)
            if child_pid == child_tgid and parent_tgid in self._members:  # a process, not a thread
                self._members.add(child_tgid)
                self._deaths.appeared += 1
        elif what == _PROC_EVENT_EXIT:
            pid, tgid, code, _ = _EXIT.unpack_from(body)
            if pid == tgid and tgid in self._members:
                self._members.discard(tgid)
                status, sig = decode_status(code)
                self._deaths.exits.append(Exit(tgid, time.time(), status, sig))

    def _poll(self) -> None:
        while not self._stop.wait(POLL_S):
            now = set(self._roots())
            for pid in sorted(self._members - now):
                status, sig = _zombie_status(pid)
                self._deaths.exits.append(Exit(pid, time.time(), status, sig))
            self._deaths.appeared += len(now - self._members)
            self._members = now


def _listen() -> socket.socket | None:
    """A socket subscribed to the kernel's process events, or None where that is not allowed."""
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_CONNECTOR)
    except (OSError, AttributeError):
        return None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        sock.bind((0, _CN_IDX_PROC))
        op = struct.pack("=I", _PROC_CN_MCAST_LISTEN)
        cn = _CN_HDR.pack(_CN_IDX_PROC, _CN_VAL_PROC, 0, 0, len(op), 0) + op
        sock.send(_NL_HDR.pack(_NL_HDR.size + len(cn), _NLMSG_DONE, 0, 0, os.getpid()) + cn)
    except OSError:
        sock.close()
        return None
    return sock


def _proc_events(data: bytes) -> list[tuple[int, bytes]]:
    """Each (event kind, its body) of a datagram (several netlink messages may share one)."""
    found = []
    off = 0
    while off + _EVENTS_AT + _EV_HDR.size <= len(data):
        length = _NL_HDR.unpack_from(data, off)[0]
        if length < _NL_HDR.size:
            break
        what = _EV_HDR.unpack_from(data, off + _EVENTS_AT)[0]
        body = data[off + _EVENTS_AT + _EV_HDR.size : off + length]
        if len(body) >= _EXIT.size:
            found.append((what, body))
        off += (length + 3) & ~3
    return found


def _zombie_status(pid: int) -> tuple[int | None, int | None]:
    """A zombie's wait status from /proc/PID/stat (field 52, Linux ≥ 3.5); (None, None) once it
    was reaped."""
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None, None
    fields = text.rsplit(")", 1)[-1].split()
    if len(fields) < 50 or fields[0] != "Z":
        return None, None
    return decode_status(int(fields[-1]))
