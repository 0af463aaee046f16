"""cgroups for server processes: the memory limit (v2, else the v1 memory controller) and the kill
group that no process of a server escapes; sweeping groups a killed run left (the CPU quota is in
machine/cpuquota.py)."""

from __future__ import annotations

import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

_V2_ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
_V1_MEMORY = Path("/sys/fs/cgroup/memory")
V1_CPU = Path("/sys/fs/cgroup/cpu")


def controllers(group: Path) -> set[str]:
    try:
        return set((group / "cgroup.controllers").read_text().split())
    except OSError:
        return set()


def enable(parent: Path, controller: str = "memory") -> None:
    """Let the children of a v2 group use a controller: enable it from the hierarchy's root down
    to that group (each level must enable it for the next)."""
    mount = mount_root(parent)
    parts = parent.relative_to(mount).parts
    for depth in range(len(parts) + 1):
        control = mount.joinpath(*parts[:depth]) / "cgroup.subtree_control"
        if controller not in control.read_text().split():
            control.write_text(f"+{controller}")


class LimitGroup:
    """What a limit's group does for the processes of one server start (the memory limit, the CPU
    quota): each joins it before exec and it is removed after, unless it is the kill group's own
    directory (`shared`), which the kill group joins and removes."""

    path: Path | None
    shared: bool

    def join_self(self) -> None:
        """Called in the child between fork and exec (a shared group is joined as the kill group)."""
        if self.path is not None and not self.shared:
            (self.path / "cgroup.procs").write_text("0")

    def remove(self) -> None:
        if self.path is not None and not self.shared:
            try:
                self.path.rmdir()
            except OSError:
                pass


@dataclass
class MemoryCgroup(LimitGroup):
    """The memory limit of one server start. On cgroup v2 with the memory controller (Debian 12,
    Ubuntu 24.04) it is set on the server's kill group itself, so joining the kill group cannot
    move a process out of its limit; on hybrid hosts it is a group of the v1 memory controller.
    `applied` says how it was set, or why not; `verify` what the server's processes really are in."""

    path: Path | None
    applied: str
    limit_bytes: int | None
    version: int | None = None
    shared: bool = False  # the kill group's own directory: joined and removed with it

    @classmethod
    def create(cls, limit_bytes: int | None, kill: KillGroup) -> MemoryCgroup:
        """The limit for the processes that will join `kill` (created first, empty)."""
        if not limit_bytes:
            return cls(None, "no limit requested", None)
        try:
            if kill.path is not None and "memory" in controllers(mount_root(kill.path)):
                enable(kill.path.parent)
                return cls._on_v2(kill.path, limit_bytes)
            if (_V1_MEMORY / "cgroup.procs").exists():
                path = _V1_MEMORY / f"wsgibench-{os.getpid()}-{uuid.uuid4().hex[:8]}"
                path.mkdir()
                (path / "memory.limit_in_bytes").write_text(str(limit_bytes))
                return cls(path, f"cgroup v1 memory.limit_in_bytes={limit_bytes}", limit_bytes, 1)
        except OSError as exc:
            return cls(None, f"not applied: {exc.strerror or exc}", None)
        return cls(None, "not applied: no writable memory cgroup", None)

    @classmethod
    def _on_v2(cls, path: Path, limit_bytes: int) -> MemoryCgroup:
        (path / "memory.max").write_text(str(limit_bytes))
        if (path / "memory.swap.max").exists():
            (path / "memory.swap.max").write_text("0")
        return cls(path, f"cgroup v2 memory.max={limit_bytes}", limit_bytes, 2, shared=True)

    @property
    def setting(self) -> str:
        return "memory.max" if self.version == 2 else "memory.limit_in_bytes"

    def read_back(self) -> int | None:
        """The limit in bytes as the group holds it now (None: unlimited or unreadable)."""
        if self.path is None:
            return None
        try:
            text = (self.path / self.setting).read_text().split()[0]
        except (OSError, IndexError):
            return None
        return int(text) if text.isdigit() else None

    def verify(self, pids: list[int]) -> str:
        """What the store records: the limit as read back from the group's own file, compared
        with the one asked for exactly, and every given process (the server's tree, found apart
        from the group) in the group by its /proc/PID/cgroup; or why the limit does not hold."""
        if self.path is None:
            return self.applied
        if (why := self.changed()) is not None:
            return f"not applied: {why}"
        if not pids:
            return "not applied: no process of the server to check"
        want, outside = outside_of(self.path, self.version, pids)
        if outside:
            return (
                f"not applied: process {outside[0]}, not {want} ({self.setting}={self.limit_bytes})"
            )
        return (
            f"cgroup v{self.version} {self.setting}={self.limit_bytes}, read back and verified for "
            f"{len(pids)} process(es)"
        )

    def changed(self) -> str | None:
        """Why the group's limit is not the one asked for any more (None: it is)."""
        if self.path is None:
            return None
        held = self.read_back()
        if held != self.limit_bytes:
            now = "no limit or none readable" if held is None else f"{held}"
            return f"asked for {self.setting}={self.limit_bytes}, the group holds {now}"
        return None

    def peak_bytes(self) -> int | None:
        """The group's own high-water mark of memory use (every process, shared pages once)."""
        if self.path is None:
            return None
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.path / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

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


def mount_root(path: Path) -> Path:
    """The mount point of the cgroup hierarchy that holds `path` (the deepest that contains it)."""
    for root in (_V1_MEMORY, V1_CPU, Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup")):
        if path == root or root in path.parents:
            return root
    return path


def group_of(pid: int, version: int | None, controller: str = "memory") -> str | None:
    """The cgroup of a process in the hierarchy of that version that has the controller (v1), or
    the unified one (v2); None once it exited."""
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return None
    return group_in(text, version, controller)


def group_in(text: str, version: int | None, controller: str = "memory") -> str | None:
    """The group a /proc/PID/cgroup text names in that version's hierarchy (as `group_of`)."""
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        if (version == 2 and controllers == "") or (
            version == 1 and controller in controllers.split(",")
        ):
            return path
    return None


def outside_of(
    group: Path, version: int | None, pids: list[int], controller: str = "memory"
) -> tuple[str, list[str]]:
    """The group as /proc/PID/cgroup names it, and each given process that is in another group
    of that hierarchy ("PID in GROUP"; a process that exited is in none)."""
    want = "/" + group.relative_to(mount_root(group)).as_posix()
    outside = [
        f"{pid} in {where}"
        for pid in pids
        if (where := group_of(pid, version, controller)) not in (None, want)
    ]
    return want, outside


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

    def cpu_usage_s(self) -> float | None:
        """CPU seconds every process of the group used so far, those that exited included
        (cgroup v2 cpu.stat usage_usec; None without a group)."""
        if self.path is None:
            return None
        try:
            for line in (self.path / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
        except (OSError, ValueError):
            return None
        return None

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
                time.sleep(0.02)


def sweep_orphans() -> list[int]:
    """Kill what runs in groups left by wsgibench processes that no longer exist; returns the pids."""
    root = _v2_root()
    base = root / "wsgibench" if root else None
    killed: list[int] = []
    if base is None or not base.exists():
        return killed
    for group in sorted(base.glob("owner-*")):
        owner = int(group.name.split("-")[1])
        if _alive(owner):
            continue
        stale = KillGroup(group)
        killed += stale.pids()
        stale.kill()
        stale.remove()
    return killed + _sweep_v1(_V1_MEMORY) + _sweep_v1(V1_CPU)


def _sweep_v1(hierarchy: Path) -> list[int]:
    """The v1 groups (memory, cpu) of dead wsgibench runs (hybrid hosts): kill what is in them,
    remove them."""
    killed: list[int] = []
    for group in sorted(hierarchy.glob("wsgibench-*")):
        if _alive(int(group.name.split("-")[1])):
            continue
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except OSError:
            continue
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        killed += pids
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.02)
    return killed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
