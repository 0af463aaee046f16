"""The machine's CPU topology (cores and their SMT siblings, NUMA nodes) and the CPU layout of a
study: which CPUs the server gets and which the engine gets."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SYS = Path("/sys/devices/system")


def parse_cpulist(text: str) -> list[int]:
    """ "0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11] (the kernel's cpulist format)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.extend(range(int(low), int(high or low) + 1))
    return cpus


@dataclass(frozen=True)
class Topology:
    """Usable CPUs grouped into physical cores (SMT siblings together) and NUMA nodes."""

    cpus: tuple[int, ...]
    cores: tuple[tuple[int, ...], ...]  # each core's usable CPUs, in node then CPU order
    nodes: tuple[tuple[int, ...], ...]  # each NUMA node's usable CPUs

    @property
    def smt(self) -> bool:
        return any(len(core) > 1 for core in self.cores)

    def node_of(self, cpu: int) -> int:
        return next((i for i, node in enumerate(self.nodes) if cpu in node), 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "cpus": list(self.cpus),
            "cores": [list(c) for c in self.cores],
            "nodes": [list(n) for n in self.nodes],
            "smt": self.smt,
        }


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def read(usable: list[int] | None = None, sys_dir: Path = SYS) -> Topology:
    """This machine's topology, restricted to the CPUs this process may use."""
    cpus = sorted(usable if usable is not None else os.sched_getaffinity(0))
    nodes = []
    for node in sorted(sys_dir.glob("node/node[0-9]*"), key=lambda p: int(p.name[4:])):
        text = _read(node / "cpulist")
        members = tuple(c for c in parse_cpulist(text) if c in cpus) if text else ()
        if members:
            nodes.append(members)
    placed = {c for n in nodes for c in n}
    if not nodes or placed != set(cpus):
        nodes = [tuple(cpus)]
    cores: dict[tuple[int, ...], None] = {}
    for cpu in cpus:
        text = _read(sys_dir / f"cpu/cpu{cpu}/topology/thread_siblings_list")
        siblings = tuple(c for c in parse_cpulist(text) if c in cpus) if text else (cpu,)
        cores.setdefault(siblings or (cpu,), None)
    return build(cpus, list(cores), nodes)


def build(cpus: list[int], cores: list[tuple[int, ...]], nodes: list[tuple[int, ...]]) -> Topology:
    """A topology from its parts, cores ordered by node then first CPU (tests make synthetic ones)."""

    def node_index(core: tuple[int, ...]) -> int:
        return next((i for i, n in enumerate(nodes) if core[0] in n), 0)

    ordered = sorted(cores, key=lambda core: (node_index(core), core[0]))
    return Topology(tuple(sorted(cpus)), tuple(ordered), tuple(nodes))


@dataclass(frozen=True)
class Layout:
    """Which CPUs the server and the engine get, by which rule, and what to say about it."""

    server_cpus: list[int]
    engine_cpus: list[int]
    policy: str  # "given", "half" (>= 4 CPUs), "first-cpu" (2-3 CPUs), "shared" (1 CPU)
    note: str | None = None  # e.g. the engine shares the server's CPU

    def as_dict(self) -> dict[str, Any]:
        return {
            "server_cpus": self.server_cpus,
            "engine_cpus": self.engine_cpus,
            "policy": self.policy,
            "note": self.note,
        }


def layout(
    topo: Topology, server: list[int] | None = None, engine: list[int] | None = None
) -> Layout:
    """The study's CPU layout. Given sets are kept (the other side gets the CPUs left, whole
    cores first). Otherwise: on 4 or more CPUs half the cores for the server and half for the
    engine, never splitting a core's SMT siblings, the server's half first in node order; on 2-3
    CPUs the server gets the first CPU and the engine the rest; on one CPU they share it."""
    if server is not None or engine is not None:
        return _given(topo, server, engine)
    cpus = list(topo.cpus)
    if len(cpus) == 1:
        return Layout(cpus, cpus, "shared", f"one CPU: the engine shares the server's CPU {cpus}")
    if len(cpus) < 4 or len(topo.cores) < 2:
        return Layout(cpus[:1], cpus[1:], "first-cpu")
    half = len(topo.cores) // 2
    return Layout(_flat(topo.cores[:half]), _flat(topo.cores[half:]), "half")


def _flat(cores: tuple[tuple[int, ...], ...] | list[tuple[int, ...]]) -> list[int]:
    return sorted(c for core in cores for c in core)


def _given(topo: Topology, server: list[int] | None, engine: list[int] | None) -> Layout:
    if server is None:
        assert engine is not None
        server = _rest(topo, engine) or list(engine)
    if engine is None:
        engine = _rest(topo, server) or list(server)
    shared = sorted(set(server) & set(engine))
    note = f"the engine shares CPU(s) {shared} with the server" if shared else None
    return Layout(sorted(server), sorted(engine), "given", note)


def _rest(topo: Topology, taken: list[int]) -> list[int]:
    """The CPUs of the cores none of `taken` is on; else just the CPUs not taken."""
    free_cores = [core for core in topo.cores if not set(core) & set(taken)]
    return _flat(free_cores) or [c for c in topo.cpus if c not in taken]


def scaling_steps(topo: Topology, engine_share: float = 0.5) -> tuple[list[int], list[str]]:
    """Server CPU counts 1, 2, 4, 8, ... that leave the engine at least `engine_share` as many
    CPUs (whole cores); and a line for each count skipped on this machine."""
    steps, skipped = [], []
    n = 1
    while n <= len(topo.cpus):
        need = n + max(1, math.ceil(n * engine_share))
        if need <= len(topo.cpus):
            steps.append(n)
        else:
            skipped.append(
                f"{n} server CPUs: the engine needs {need - n} more, "
                f"this machine has {len(topo.cpus)} CPUs"
            )
        n *= 2
    return steps, skipped


def scaled_layout(topo: Topology, n: int) -> Layout:
    """The layout of a scaling step: the server on its first n CPUs (SMT siblings together, cores
    in order), the engine on the cores left; sharing when none are left (said in the note)."""
    server = sorted([c for core in topo.cores for c in core][:n])
    engine = _rest(topo, server)
    if not engine:
        return Layout(server, server, "scaling", f"the engine shares the server's {n} CPU(s)")
    return Layout(server, engine, "scaling")
