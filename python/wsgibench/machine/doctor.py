"""`wsgibench doctor`: the system settings that distort results here, each with value, advice, consequence."""

from __future__ import annotations

import glob
import os
import resource
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psutil

from wsgibench.machine import serverenv, steadiness, topology
from wsgibench.machine.cgroups import KillGroup, MemoryCgroup
from wsgibench.machine.environment import sysctl


@dataclass(frozen=True)
class Finding:
    name: str
    value: str
    recommended: str
    ok: bool
    consequence: str  # what goes wrong when it is not as recommended
    fix: str | None = None  # sysctl "key=value" that --fix may apply

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _at_least(key: str, minimum: int, consequence: str) -> Finding:
    value = sysctl(key)
    n = _int(value)
    return Finding(
        key,
        value or "unreadable",
        f">= {minimum}",
        n is not None and n >= minimum,
        consequence,
        f"{key}={minimum}",
    )


def check_nofile() -> Finding:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return Finding(
        "open files (RLIMIT_NOFILE)",
        f"soft {soft}, hard {hard}",
        "hard >= 65536",
        hard == resource.RLIM_INFINITY or hard >= 65536,
        "10,000 connections need 10,000 descriptors on each side; the engine raises its "
        "soft limit to the hard one, servers inherit it",
    )


def check_port_range() -> Finding:
    value = sysctl("net.ipv4.ip_local_port_range") or ""
    parts = [n for p in value.split() if (n := _int(p)) is not None]
    width = parts[1] - parts[0] + 1 if len(parts) == 2 == len(value.split()) else 0
    return Finding(
        "net.ipv4.ip_local_port_range",
        value or "unreadable",
        "a range of >= 28000 ports",
        width >= 28000,
        "connection-per-request load runs out of ephemeral ports "
        "(connect errors that are the client's, not the server's)",
        "net.ipv4.ip_local_port_range=1024 65535",
    )


def check_tw_reuse() -> Finding:
    value = sysctl("net.ipv4.tcp_tw_reuse")
    return Finding(
        "net.ipv4.tcp_tw_reuse",
        value or "unreadable",
        "1 (or 2: loopback only)",
        value in ("1", "2"),
        "TIME_WAIT sockets pile up under connection-per-request load and new connections fail",
        "net.ipv4.tcp_tw_reuse=1",
    )


def check_governor() -> Finding:
    files = glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor")
    if not files:
        return Finding(
            "CPU frequency governor",
            "not exposed (virtual machine?)",
            "performance",
            True,
            "a power-saving governor changes speed under load, so repeats disagree",
        )
    values = sorted({Path(f).read_text().strip() for f in files})
    return Finding(
        "CPU frequency governor",
        ", ".join(values),
        "performance",
        values == ["performance"],
        "a power-saving governor changes speed under load, so repeats disagree",
    )


def check_other_load(cpus: list[int]) -> Finding:
    per_cpu = psutil.cpu_percent(interval=0.5, percpu=True)
    busy = {c: per_cpu[c] for c in cpus if c < len(per_cpu)}
    worst = max(busy.values(), default=0.0)
    shown = ", ".join(f"cpu{c} {v:.0f}%" for c, v in busy.items())
    return Finding(
        "other load on the study's CPUs",
        shown,
        "< 10 % busy on each",
        worst < 10,
        "another process on the server's or the engine's CPU steals time from one of "
        "them: throughput drops and latency grows for reasons that are not the server's",
    )


def check_swap() -> Finding:
    swap = psutil.swap_memory()
    return Finding(
        "swap",
        f"{swap.total // 2**20} MiB, {swap.used // 2**20} MiB used",
        "no swap in use",
        swap.used == 0,
        "a server paged out to swap shows latency that is the disk's; "
        "a memory limit with swap lets a leaking server limp on instead of failing",
    )


def check_cgroup() -> Finding:
    group = KillGroup.create()
    probe = MemoryCgroup.create(512 * 2**20, group)
    probe.remove()
    group.remove()
    ok = probe.path is not None
    return Finding(
        "memory limit (cgroup)",
        probe.applied,
        "applicable",
        ok,
        "without a cgroup the study's memory limit (seed 004: 512 MB) is not enforced; "
        "a leaking server can take the machine down",
    )


def check_steadiness(cpu: int) -> Finding:
    measured = steadiness.measure(cpu)
    return Finding(
        "CPU speed between samples",
        measured.describe(),
        f"<= {steadiness.STEADY:.0%} (a fixed piece of work per CPU-second)",
        measured.spread <= steadiness.STEADY,
        "the CPU itself runs faster and slower (its clock, a busy other half of its core, "
        "another guest in its caches), which no steal figure shows: a server's CPU per request "
        "moves with it, and two runs cannot agree more closely than this",
    )


def check_python_settings() -> Finding:
    """Python debug settings in this shell: servers start without them (machine/serverenv.py)."""
    found = serverenv.dropped()
    return Finding(
        "Python settings in this shell",
        ", ".join(found) or "none that change a server",
        "none (servers start without them)",
        True,
        "PYTHONDEVMODE, PYTHONMALLOC, PYTHONTRACEMALLOC and the like slow a server by 8 % to "
        "four-fold, PYTHONPATH would put the shell's packages before a server's pinned ones: "
        "servers do not inherit them (a study's app_env still sets them)",
    )


def findings(cpus: list[int] | None = None, steady: bool = False) -> list[Finding]:
    """The checks; with `steady`, also the CPU's speed sampled for 3 s on the server's first CPU
    (`wsgibench doctor`; a study's start leaves it out)."""
    lay = topology.layout(topology.read())
    server, engine = lay.server_cpus, lay.engine_cpus
    checks: list[Callable[[], Finding]] = [
        check_nofile,
        lambda: _at_least(
            "net.core.somaxconn",
            4096,
            "listen queues are capped at this value "
            "whatever backlog a server asks for: bursts of connections are dropped "
            "and retried after 1 s (latency spikes at exactly 1 s / 3 s)",
        ),
        lambda: _at_least(
            "net.ipv4.tcp_max_syn_backlog",
            4096,
            "half-open connections beyond it are dropped under a burst of new connections",
        ),
        check_port_range,
        check_tw_reuse,
        check_governor,
        lambda: check_other_load(cpus or sorted(set(server + engine))),
        check_swap,
        check_cgroup,
        check_python_settings,
    ]
    if steady and server:
        checks.append(lambda: check_steadiness(server[0]))
    return [check() for check in checks]


def apply_fixes(found: list[Finding]) -> list[str]:
    """Write the sysctls of failed findings (root only); returns what changed."""
    changed = []
    for f in found:
        if f.ok or not f.fix:
            continue
        key, value = f.fix.split("=", 1)
        path = Path("/proc/sys", *key.split("."))
        try:
            before = path.read_text().strip()
            path.write_text(value)
            changed.append(f"{key}: {before} -> {value}")
        except OSError as exc:
            changed.append(f"{key}: not changed ({exc.strerror or exc})")
    return changed


def is_root() -> bool:
    return os.geteuid() == 0
