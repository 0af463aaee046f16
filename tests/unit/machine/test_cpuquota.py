"""The CPU quota's cgroup v2 file protocol, on a directory laid out like a v2 group (this VM's v2
hierarchy has no cpu controller, so the e2e tests exercise v1): the controller enabled for the
children, cpu.max written as quota and period, read back in cores, throttling read from cpu.stat;
a group without the controller is named as not applied."""

from __future__ import annotations

import os
from pathlib import Path

from wsgibench.machine.cgroups import KillGroup
from wsgibench.machine.cpuquota import CpuQuota


def _v2_group(root: Path, controllers: str) -> KillGroup:
    (root / "cgroup.subtree_control").write_text("memory")
    group = root / "owner-1"
    group.mkdir()
    (group / "cgroup.controllers").write_text(controllers)
    return KillGroup(group)


def test_a_v2_quota_is_written_read_back_and_its_throttling_read(tmp_path: Path):
    kill = _v2_group(tmp_path, "cpu memory pids")
    quota = CpuQuota.create(0.5, kill)
    assert (quota.version, quota.shared) == (2, True), quota.applied
    assert "+cpu" in (tmp_path / "cgroup.subtree_control").read_text()
    assert (kill.path / "cpu.max").read_text() == "50000 100000"
    assert quota.read_back() == 0.5 and quota.changed() is None
    # Nothing to check is no verification: never "verified for 0 process(es)".
    assert quota.verify([]) == "not applied: no process of the server to check"
    # This test's own process is in no such group: the membership check fails, naming it.
    assert quota.verify([os.getpid()]).startswith(f"not applied: process {os.getpid()} in ")
    (kill.path / "cpu.stat").write_text(
        "usage_usec 900000\nnr_periods 20\nnr_throttled 15\nthrottled_usec 750000\n"
    )
    assert quota.throttling() == {"periods": 20, "throttled_periods": 15, "throttled_s": 0.75}
    # A quota changed by hand after it was set is caught, read back against the one asked for.
    (kill.path / "cpu.max").write_text("200000 100000")
    assert quota.changed() == "asked for a quota of 0.5 cores, the group holds 2 cores"
    assert quota.verify([os.getpid()]) == (
        "not applied: asked for a quota of 0.5 cores, the group holds 2 cores"
    )
    (kill.path / "cpu.max").write_text("max 100000")
    assert (
        quota.changed()
        == "asked for a quota of 0.5 cores, the group holds no quota or none readable"
    )


def test_no_quota_asked_and_no_controller_are_said(tmp_path: Path):
    assert CpuQuota.create(None, KillGroup(None)).applied == "no quota requested"
    kill = _v2_group(tmp_path, "memory pids")
    quota = CpuQuota.create(1.0, kill)
    if quota.version == 1:  # a hybrid host: the v1 cpu controller holds it instead
        assert quota.applied.startswith("cgroup v1 cpu.cfs_quota_us=100000")
        quota.remove()
    else:
        assert quota.path is None and quota.applied.startswith("not applied")
