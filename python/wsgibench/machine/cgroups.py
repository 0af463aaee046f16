"""cgroups for server processes: the memory limit (v2, else the v1 memory controller) and the kill
group that no process of a server escapes; sweeping groups a killed run left."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

_V2_ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
_V1_MEMORY = Path("/sys/fs/cgroup/memory")


def _v2_memory_root() -> Path | None:
    for root in _V2_ROOTS:
        controllers = root / "cgroup.controllers"
        if controllers.exists() and "memory" in controllers.read_text().split():
            return root
    return None


@dataclass
class MemoryCgroup:
    """A cgroup holding one server start; `applied` says how (or why not) the limit was set."""

    path: Path | None
    applied: str
    limit_bytes: int | None

    @classmethod
    def create(cls, limit_bytes: int | None) -> MemoryCgroup:
        if not limit_bytes:
            return cls(None, "no limit requested", None)
        name = f"wsgibench-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            root = _v2_memory_root()
            if root is not None:
                path = root / name
                path.mkdir()
                (path / "memory.max").write_text(str(limit_bytes))
                (path / "memory.swap.max").write_text("0") if (
                    path / "memory.swap.max"
                ).exists() else None
                return cls(path, f"cgroup v2 memory.max={limit_bytes}", limit_bytes)
            if (_V1_MEMORY / "cgroup.procs").exists():
                path = _V1_MEMORY / name
                path.mkdir()
                (path / "memory.limit_in_bytes").write_text(str(limit_bytes))
                return cls(path, f"cgroup v1 memory.limit_in_bytes={limit_bytes}", limit_bytes)
        except OSError as exc:
            return cls(None, f"not applied: {exc.strerror or exc}", None)
        return cls(None, "not applied: no writable memory cgroup", None)

    def join_self(self) -> None:
        """Called in the child between fork and exec."""
        if self.path is not None:
            (self.path / "cgroup.procs").write_text("0")

    def oom_kills(self) -> int:
        if self.path is None:
            return 0
        for name in ("memory.events", "memory.oom_control"):
            f = self.path / name
            if f.exists():
                for line in f.read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        return 0

    def remove(self) -> None:
        if self.path is not None:
            try:
                self.path.rmdir()
            except OSError:
                pass


def _v2_root() -> Path | None:
    for root in _V2_ROOTS:
        if (root / "cgroup.procs").exists() and (root / "cgroup.controllers").exists():
            return root
    return None


@dataclass
class KillGroup:
    """A cgroup v2 holding every process of one server start, so none escapes the stop (double forks,
    setsid daemons); named after wsgibench's pid so a later run can sweep what a killed run left."""

    path: Path | None

    @classmethod
    def create(cls) -> KillGroup:
        root = _v2_root()
        if root is None:
            return cls(None)
        path = root / "wsgibench" / f"owner-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            path.mkdir(parents=True)
        except OSError:
            return cls(None)
        return cls(path if (path / "cgroup.kill").exists() else None)

    def join_self(self) -> None:
        if self.path is not None:
            (self.path / "cgroup.procs").write_text("0")

    def pids(self) -> list[int]:
        if self.path is None:
            return []
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def kill(self) -> None:
        if self.path is None:
            return
        try:
            (self.path / "cgroup.kill").write_text("1")
        except OSError:
            pass

    def remove(self) -> None:
        if self.path is None:
            return
        for _ in range(50):  # the kernel empties the group shortly after cgroup.kill
            try:
                self.path.rmdir()
                return
            except OSError:
                import time

                time.sleep(0.02)


def sweep_orphans() -> list[int]:
    """Kill what runs in groups left by wsgibench processes that no longer exist; returns the pids."""
    root = _v2_root()
    base = root / "wsgibench" if root else None
    killed: list[int] = []
    if base is None or not base.exists():
        return killed
    for group in base.glob("owner-*"):
        owner = int(group.name.split("-")[1])
        if _alive(owner):
            continue
        stale = KillGroup(group)
        killed += stale.pids()
        stale.kill()
        stale.remove()
    return killed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
