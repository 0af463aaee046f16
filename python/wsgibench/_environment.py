"""Environment metadata stored with every study: machine, kernel, sysctls, versions, git commit."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import psutil

from . import __version__

SYSCTLS = (
    "net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout", "fs.file-max",
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


def _first_line(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout + out.stderr).strip()
    return text.splitlines()[0] if text else None


@cache
def binary_version(project: str) -> str | None:
    """Version of a non-Python server (nginx, apache2) from its own banner."""
    if project == "nginx":
        from .servers._nginx import nginx_binary

        exe = nginx_binary()
        line = _first_line([exe, "-v"]) if exe else None
    elif project == "php-fpm":
        from .servers.php_fpm import php_fpm_binary

        exe = php_fpm_binary()
        line = _first_line([exe, "-v"]) if exe else None
    elif project in ("apache", "apache2"):
        exe = shutil.which("apache2") or "/usr/sbin/apache2"
        line = _first_line([exe, "-v"]) if Path(exe).exists() else None
    else:
        exe = shutil.which(project)
        line = _first_line([exe, "--version"]) if exe else None
    if not line:
        return None
    m = re.search(r"(\d+\.\d+(\.\d+)?)", line)
    return m.group(1) if m else line


def git_commit() -> str | None:
    here = Path(__file__).resolve().parent
    line = _first_line(["git", "-C", str(here), "rev-parse", "HEAD"])
    return line if line and re.fullmatch(r"[0-9a-f]{40}", line) else None


def collect() -> dict:
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
        "nginx_version": binary_version("nginx"),
        "apache_version": binary_version("apache2"),
        "loadavg": list(os.getloadavg()),
    }


def _os_release() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.platform()


def machine_key(env: dict) -> dict:
    """The metadata that must match for two stores to be comparable."""
    return {k: env.get(k) for k in ("cpu_model", "cpu_count", "kernel", "memory_bytes")}
