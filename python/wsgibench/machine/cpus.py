"""Which CPUs this process may use, and how they are split between the server and the engine."""

from __future__ import annotations

import os


def available_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def split_cpus(server: list[int] | None, engine: list[int] | None) -> tuple[list[int], list[int]]:
    """Default split: server on the first CPU, engine on the rest (here: 0 and 1)."""
    cpus = available_cpus()
    if server is None:
        server = cpus[:1] if len(cpus) > 1 else cpus
    if engine is None:
        rest = [c for c in cpus if c not in server]
        engine = rest or cpus
    return server, engine
