"""Environment metadata stored with every study: machine, kernel, sysctls, versions, git commit."""

from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path
from typing import Any

import psutil

from wsgibench import __version__
from wsgibench.machine.binaries import first_line

SYSCTLS = (
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_fin_timeout",
    "fs.file-max",
)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def git_commit() -> str | None:
    here = Path(__file__).resolve().parent
    line = first_line(["git", "-C", str(here), "rev-parse", "HEAD"])
    return line if line and re.fullmatch(r"[0-9a-f]{40}", line) else None


def collect(**extra: object) -> dict[str, Any]:
    """The machine's metadata; `extra` adds what upper layers know (the versions of the system
    binaries the study's servers need: nginx_version, apache_version)."""
    mem = psutil.virtual_memory()
    return {
        "hostname": platform.node(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": sorted(os.sched_getaffinity(0)),
        "memory_bytes": mem.total,
        "kernel": platform.release(),
        "os": _os_release(),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "wsgibench_version": __version__,
        "git_commit": git_commit(),
        "sysctls": {name: sysctl(name) for name in SYSCTLS},
        "loadavg": list(os.getloadavg()),
        **extra,
    }


def _os_release() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.platform()
