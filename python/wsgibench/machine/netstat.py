"""Kernel TCP counters that explain results: listen-queue overflows and drops from /proc/net/netstat."""

from __future__ import annotations

from pathlib import Path

WATCHED = ("ListenOverflows", "ListenDrops", "TCPAbortOnData", "TCPTimeouts")


def tcp_ext(path: Path = Path("/proc/net/netstat")) -> dict[str, int]:
    """TcpExt counters by name (the file pairs a header line with a value line)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:") and values.startswith("TcpExt:"):
            pairs = zip(names.split()[1:], values.split()[1:], strict=False)
            return {k: int(v) for k, v in pairs if k in WATCHED}
    return {}


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in after}
