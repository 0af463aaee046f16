"""The CPU quota's cgroup v2 file protocol, on a directory laid out like a v2 group (this VM's v2
hierarchy has no cpu controller, so the e2e tests exercise v1): the controller enabled for the
children, cpu.max written as quota and period, read back in cores, throttling read from cpu.stat;
a group without the controller is named as not applied."""

from __future__ import annotations

import os
from pathlib import Path

from wsgibench.machine import cgroups, cpuquota
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
    assert quota.applied == "cgroup v2 cpu.max=50000 100000"
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
    (kill.path / "cpu.max").write_text("100000 100000")  # 1 core: half a core more
    assert quota.changed() == "asked for a quota of 0.5 cores, the group holds 1 cores"
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
    unasked = CpuQuota.create(None, KillGroup(None))
    assert unasked.applied == "no quota requested" and unasked.asked() is None
    assert unasked.read_back() is None and unasked.throttling() is None
    kill = _v2_group(tmp_path, "memory pids")
    quota = CpuQuota.create(1.0, kill)
    if quota.version == 1:  # a hybrid host: the v1 cpu controller holds it instead
        assert quota.applied.startswith("cgroup v1 cpu.cfs_quota_us=100000")
        quota.remove()
    else:
        assert quota.path is None and quota.applied.startswith("not applied")


def test_a_v1_quota_is_written_read_back_and_its_throttling_read(tmp_path: Path, monkeypatch):
    v1 = tmp_path / "cpu"  # laid out like the v1 cpu controller's root
    v1.mkdir()
    (v1 / "cpu.cfs_quota_us").write_text("-1")
    monkeypatch.setattr(cpuquota, "V1_CPU", v1)
    monkeypatch.setattr(cgroups, "V1_CPU", v1)
    quota = CpuQuota.create(0.25, KillGroup(None))
    assert (quota.version, quota.shared, quota.cores) == (1, False, 0.25), quota.applied
    assert quota.path is not None and quota.path.parent == v1
    assert quota.applied == "cgroup v1 cpu.cfs_quota_us=25000"
    assert (quota.path / "cpu.cfs_quota_us").read_text() == "25000"
    assert (quota.path / "cpu.cfs_period_us").read_text() == "100000"
    assert quota.read_back() == 0.25 and quota.asked() == 0.25 and quota.changed() is None
    # membership read in the cpu controller's hierarchy of /proc/PID/cgroup (v1 has one each)
    group = "/" + quota.path.name
    monkeypatch.setattr(
        cgroups, "group_of", lambda pid, version, ctl: group if ctl == "cpu" else "/other"
    )
    assert quota.verify([4242]) == (
        "cgroup v1 quota 0.25 cores, read back and verified for 1 process(es)"
    )
    (quota.path / "cpu.stat").write_text(
        "nr_periods 40\nnr_throttled 30\nthrottled_time 1234567891\n"
    )
    assert quota.throttling() == {"periods": 40, "throttled_periods": 30, "throttled_s": 1.2346}
    (quota.path / "cpu.stat").write_text("nr_periods 5\n")  # the rest not said: none
    assert quota.throttling() == {"periods": 5, "throttled_periods": 0, "throttled_s": 0.0}
    (quota.path / "cpu.cfs_quota_us").write_text("-1")  # unlimited, set by hand
    assert quota.read_back() is None
    assert (
        quota.changed()
        == "asked for a quota of 0.25 cores, the group holds no quota or none readable"
    )
    # the smallest quota the kernel takes: 1 ms a period, whatever less was asked for
    tiny = CpuQuota.create(0.001, KillGroup(None))
    assert tiny.applied == "cgroup v1 cpu.cfs_quota_us=1000" and tiny.asked() == 0.01


def test_a_v2_throttled_time_is_read_to_the_tenth_of_a_millisecond(tmp_path: Path):
    quota = CpuQuota.create(0.5, _v2_group(tmp_path, "cpu memory pids"))
    assert quota.path is not None
    (quota.path / "cpu.stat").write_text("nr_periods 9\nnr_throttled 2\nthrottled_usec 123456789\n")
    assert quota.throttling() == {"periods": 9, "throttled_periods": 2, "throttled_s": 123.4568}


def test_a_v2_cpu_stat_without_its_throttling_says_none(tmp_path: Path):
    quota = CpuQuota.create(0.5, _v2_group(tmp_path, "cpu memory pids"))
    assert quota.path is not None
    (quota.path / "cpu.stat").write_text("usage_usec 1\n")
    assert quota.throttling() == {"periods": 0, "throttled_periods": 0, "throttled_s": 0.0}


def test_no_cpu_cgroup_anywhere_and_a_refused_one_are_said(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(cpuquota, "V1_CPU", tmp_path / "no-such-controller")
    none = CpuQuota.create(1.0, KillGroup(None))
    assert (none.path, none.applied, none.cores) == (
        None,
        "not applied: no writable cpu cgroup",
        None,
    )
    v1 = tmp_path / "cpu"
    v1.mkdir()
    (v1 / "cpu.cfs_quota_us").write_text("-1")
    monkeypatch.setattr(cpuquota, "V1_CPU", v1)

    def refused(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "mkdir", refused)
    denied = CpuQuota.create(1.0, KillGroup(None))
    assert (denied.path, denied.applied, denied.cores) == (
        None,
        "not applied: Permission denied",
        None,
    )


def test_a_quota_holds_only_with_a_group_and_a_verification_that_passed(tmp_path: Path):
    quota = CpuQuota.create(0.5, _v2_group(tmp_path, "cpu memory"))
    assert quota.holds("cgroup v2 cpu.max=50000 100000, read back and verified for 2 process(es)")
    assert not quota.holds("not applied: no process of the server to check")
    unasked = CpuQuota.create(None, KillGroup(None))
    assert not unasked.holds("no quota requested")  # what it says is beside the point: no group
