"""A cgroup CPU quota for a server's processes (cpu.max on v2, cpu.cfs_quota_us on v1): set before
they start, read back and checked for each of them once the server answers, throttling counted."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wsgibench.machine.cgroups import (
    V1_CPU,
    KillGroup,
    LimitGroup,
    controllers,
    enable,
    mount_root,
    outside_of,
)

PERIOD_US = 100_000  # the kernel's default period: the quota is cores × this per period


@dataclass
class CpuQuota(LimitGroup):
    """The CPU quota of one server start. On cgroup v2 with the cpu controller it is set on the
    server's kill group (joining it is joining the quota); otherwise on a group of the v1 cpu
    controller that each process joins before exec. `applied` says how it was set, or why not."""

    path: Path | None
    applied: str
    cores: float | None
    version: int | None = None
    shared: bool = False  # the kill group's own directory: joined and removed with it

    @classmethod
    def create(cls, cores: float | None, kill: KillGroup) -> CpuQuota:
        if not cores:
            return cls(None, "no quota requested", None)
        quota = max(1000, round(cores * PERIOD_US))
        try:
            if kill.path is not None and "cpu" in controllers(mount_root(kill.path)):
                enable(kill.path.parent, "cpu")
                (kill.path / "cpu.max").write_text(f"{quota} {PERIOD_US}")
                return cls(kill.path, f"cgroup v2 cpu.max={quota} {PERIOD_US}", cores, 2, True)
            if (V1_CPU / "cpu.cfs_quota_us").exists():
                path = V1_CPU / f"wsgibench-{os.getpid()}-{uuid.uuid4().hex[:8]}"
                path.mkdir()
                (path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
                (path / "cpu.cfs_quota_us").write_text(str(quota))
                return cls(path, f"cgroup v1 cpu.cfs_quota_us={quota}", cores, 1)
        except OSError as exc:
            return cls(None, f"not applied: {exc.strerror or exc}", None)
        return cls(None, "not applied: no writable cpu cgroup", None)

    def read_back(self) -> float | None:
        """The quota in cores as the group holds it now (None: unlimited or unreadable)."""
        if self.path is None:
            return None
        try:
            if self.version == 2:
                quota, period = (self.path / "cpu.max").read_text().split()[:2]
                return None if quota == "max" else int(quota) / int(period)
            quota_us = int((self.path / "cpu.cfs_quota_us").read_text())
            period_us = int((self.path / "cpu.cfs_period_us").read_text())
        except (OSError, ValueError):
            return None
        return None if quota_us < 0 else quota_us / period_us

    def asked(self) -> float | None:
        """The quota asked for, in cores, as written (quota µs over the period)."""
        return None if self.cores is None else max(1000, round(self.cores * PERIOD_US)) / PERIOD_US

    def verify(self, pids: list[int]) -> str:
        """What the store records: the quota read back from the group's own files, compared with
        the one asked for exactly, and every given process (the server's tree, found apart from
        the group) in it by its /proc/PID/cgroup; or why the quota does not hold."""
        if self.path is None:
            return self.applied
        if (why := self.changed()) is not None:
            return f"not applied: {why}"
        if not pids:
            return "not applied: no process of the server to check"
        cores = self.read_back()
        want, outside = outside_of(self.path, self.version, pids, "cpu")
        if outside:
            return f"not applied: process {outside[0]}, not {want} (quota {cores:g} cores)"
        return (
            f"cgroup v{self.version} quota {cores:g} cores, read back and verified for "
            f"{len(pids)} process(es)"
        )

    def changed(self) -> str | None:
        """Why the group's quota is not the one asked for any more (None: it is)."""
        if self.path is None:
            return None
        held, asked = self.read_back(), self.asked()
        if held is None or asked is None or abs(held - asked) > 1e-9:
            now = "no quota or none readable" if held is None else f"{held:g} cores"
            return f"asked for a quota of {asked:g} cores, the group holds {now}"
        return None

    def holds(self, verified: str) -> bool:
        return self.path is not None and not verified.startswith("not applied")

    def throttling(self) -> dict[str, Any] | None:
        """The group's cpu.stat so far: periods, periods throttled, seconds throttled."""
        if self.path is None:
            return None
        try:
            stat = dict(
                line.split()[:2] for line in (self.path / "cpu.stat").read_text().splitlines()
            )
        except (OSError, ValueError):
            return None
        waited = (
            int(stat.get("throttled_usec", 0)) / 1e6
            if self.version == 2
            else int(stat.get("throttled_time", 0)) / 1e9
        )
        return {
            "periods": int(stat.get("nr_periods", 0)),
            "throttled_periods": int(stat.get("nr_throttled", 0)),
            "throttled_s": round(waited, 4),
        }
