"""cgroups.py on directories laid out like cgroup hierarchies (v2, and v1's memory controller):
where a limit goes and what it says, the limit and peak read back in either version, OOM kills,
a process's group read from /proc/PID/cgroup text, the kill group's processes and CPU, and the
sweep of groups a dead run left (with signals sent to a fake, never to a real process)."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from wsgibench.machine import cgroups
from wsgibench.machine.cgroups import KillGroup, MemoryCgroup, group_in, mount_root, outside_of

MIB = 2**20


def _hierarchy(root: Path, controllers: str = "cpu memory") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cgroup.procs").write_text("")
    (root / "cgroup.controllers").write_text(controllers)
    (root / "cgroup.subtree_control").write_text("")
    return root


def _mounted(root: Path):
    """A fake mount_root for groups under `root` (fails for a path elsewhere or none)."""

    def mount(path: Path) -> Path:
        assert path == root or root in path.parents, path
        return root

    return mount


def test_mount_roots_are_the_deepest_hierarchy_that_holds_a_path():
    assert mount_root(Path("/sys/fs/cgroup/wsgibench/owner-1")) == Path("/sys/fs/cgroup")
    assert mount_root(Path("/sys/fs/cgroup/memory/wsgibench-1-ab")) == cgroups._V1_MEMORY
    assert mount_root(Path("/sys/fs/cgroup/cpu/wsgibench-1-ab")) == cgroups.V1_CPU
    assert mount_root(Path("/sys/fs/cgroup/unified/x")) == Path("/sys/fs/cgroup/unified")
    assert mount_root(Path("/sys/fs/cgroup")) == Path("/sys/fs/cgroup")
    assert mount_root(Path("/tmp/elsewhere")) == Path("/tmp/elsewhere")


def test_a_controller_is_enabled_at_every_level_down_to_the_parent(tmp_path: Path, monkeypatch):
    root = _hierarchy(tmp_path / "root")
    (root / "cgroup.subtree_control").write_text("cpu memory")
    middle = root / "wsgibench"
    middle.mkdir()
    (middle / "cgroup.subtree_control").write_text("cpu")
    monkeypatch.setattr(cgroups, "mount_root", _mounted(root))
    assert cgroups.controllers(root) == {"cpu", "memory"}
    assert cgroups.controllers(middle) == set()  # no cgroup.controllers file: none
    cgroups.enable(middle)
    assert (root / "cgroup.subtree_control").read_text() == "cpu memory"  # already on: untouched
    assert (middle / "cgroup.subtree_control").read_text() == "+memory"
    cgroups.enable(middle, "io")
    assert (root / "cgroup.subtree_control").read_text() == "+io"


def test_a_v2_limit_goes_on_the_kill_group_itself(tmp_path: Path, monkeypatch):
    root = _hierarchy(tmp_path / "root")
    kill = KillGroup(root / "wsgibench" / "owner-1")
    kill.path.mkdir(parents=True)
    (root / "wsgibench" / "cgroup.subtree_control").write_text("cpu memory")
    monkeypatch.setattr(cgroups, "mount_root", _mounted(root))
    limit = MemoryCgroup.create(512 * MIB, kill)
    assert (limit.path, limit.version, limit.shared) == (kill.path, 2, True)
    assert limit.applied == f"cgroup v2 memory.max={512 * MIB}"
    assert (kill.path / "memory.max").read_text() == str(512 * MIB)
    assert not (kill.path / "memory.swap.max").exists()  # not created where swap is not accounted
    limit.join_self()  # joined as the kill group, not by the limit
    (kill.path / "memory.max").unlink()
    limit.remove()  # removed with the kill group, not by the limit
    assert not (kill.path / "cgroup.procs").exists() and kill.path.is_dir()
    MemoryCgroup(None, "no limit requested", None).remove()
    assert MemoryCgroup.create(None, kill).applied == "no limit requested"
    (root / "cgroup.controllers").write_text("cpu")  # no memory controller and no v1: not applied
    monkeypatch.setattr(cgroups, "_V1_MEMORY", tmp_path / "no-v1")
    assert MemoryCgroup.create(MIB, kill) == MemoryCgroup(
        None, "not applied: no writable memory cgroup", None
    )


def test_a_v1_limit_is_a_group_of_its_own(tmp_path: Path, monkeypatch):
    v1 = _hierarchy(tmp_path / "memory")
    monkeypatch.setattr(cgroups, "_V1_MEMORY", v1)
    limit = MemoryCgroup.create(256 * MIB, KillGroup(None))
    assert re.fullmatch(rf"wsgibench-{os.getpid()}-[0-9a-f]{{8}}", limit.path.name)
    assert limit.path.parent == v1 and (limit.version, limit.shared) == (1, False)
    assert limit.applied == f"cgroup v1 memory.limit_in_bytes={256 * MIB}"
    assert limit.setting == "memory.limit_in_bytes" and limit.read_back() == 256 * MIB
    assert limit.limit_bytes == 256 * MIB and limit.changed() is None
    limit.join_self()
    assert (limit.path / "cgroup.procs").read_text() == "0"
    (limit.path / "cgroup.procs").unlink()
    (limit.path / "memory.limit_in_bytes").unlink()
    limit.remove()
    assert not limit.path.exists()

    def refused(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "mkdir", refused)
    assert MemoryCgroup.create(MIB, KillGroup(None)).applied == "not applied: Permission denied"


def test_the_limit_and_peak_read_back_in_either_version(tmp_path: Path):
    v2 = MemoryCgroup(tmp_path, "x", 100, 2)
    assert v2.read_back() is None and v2.peak_bytes() is None  # no files yet
    (tmp_path / "memory.max").write_text("100\n")
    (tmp_path / "memory.peak").write_text("4096\n")
    assert (v2.read_back(), v2.peak_bytes(), v2.changed()) == (100, 4096, None)
    (tmp_path / "memory.max").write_text("")
    (tmp_path / "memory.peak").write_text("lots")
    assert v2.read_back() is None and v2.peak_bytes() is None
    v1 = MemoryCgroup(tmp_path, "x", 100, 1)
    (tmp_path / "memory.limit_in_bytes").write_text("100")
    (tmp_path / "memory.max_usage_in_bytes").write_text("8192")
    assert (v1.read_back(), v1.peak_bytes()) == (100, 8192)
    none = MemoryCgroup(None, "no limit requested", None)
    assert (none.read_back(), none.peak_bytes(), none.changed(), none.oom_kills()) == (
        None,
        None,
        None,
        0,
    )
    assert none.verify([1]) == "no limit requested"


def test_oom_kills_are_read_from_either_version_s_file(tmp_path: Path):
    limit = MemoryCgroup(tmp_path, "x", 100, 2)
    assert limit.oom_kills() == 0
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 4\noom_kill 3\n")
    assert limit.oom_kills() == 3
    (tmp_path / "memory.events").unlink()
    (tmp_path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert limit.oom_kills() == 2
    (tmp_path / "memory.oom_control").write_text("oom_kill_disable 0\n")
    assert limit.oom_kills() == 0


HYBRID = "12:cpu,cpuacct:/c\n4:memory:/m/x\n1:name=systemd:/s\n0::/u\n"


def test_a_process_s_group_is_read_per_version_and_controller():
    assert group_in(HYBRID, 2) == "/u"
    assert group_in(HYBRID, 1) == "/m/x"
    assert group_in(HYBRID, 1, "cpu") == "/c"
    assert group_in(HYBRID, 1, "cpuacct") == "/c"
    assert group_in("4:memory:/m\n", 2) is None
    assert group_in("0::/u\n", 1) is None
    assert group_in(HYBRID, None) is None
    assert group_in("0::/user.slice/app:1\n", 2) == "/user.slice/app:1"  # a name with a colon
    own = Path(f"/proc/{os.getpid()}/cgroup").read_text()
    assert cgroups.group_of(os.getpid(), 2) == group_in(own, 2)


def test_a_process_s_group_is_read_from_its_proc_file(monkeypatch):
    real = Path.read_text

    def read(path: Path, *args: object, **kwargs: object) -> str:
        return HYBRID if str(path) == "/proc/4242/cgroup" else real(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read)
    assert cgroups.group_of(4242, 1) == "/m/x"  # the memory controller unless said
    assert cgroups.group_of(4242, 1, "cpu") == "/c"
    assert cgroups.group_of(4242, 2) == "/u"
    assert cgroups.group_of(_no_such_pid(), 2) is None  # exited: in no group


def test_a_process_outside_the_group_is_named(tmp_path: Path, monkeypatch):
    groups = {1: "/wsgibench/owner-1", 2: "/elsewhere", 3: None}  # 3 has exited: in none
    monkeypatch.setattr(
        cgroups,
        "group_of",
        lambda pid, _v, controller: groups[pid] if controller == "memory" else "?",
    )
    root = tmp_path / "root"
    monkeypatch.setattr(cgroups, "mount_root", _mounted(root))
    inside = root / "wsgibench" / "owner-1"
    assert outside_of(inside, 2, [1, 3]) == ("/wsgibench/owner-1", [])
    assert outside_of(inside, 2, [1, 2, 3]) == ("/wsgibench/owner-1", ["2 in /elsewhere"])
    limit = MemoryCgroup(inside, "x", 100, 2)
    inside.mkdir(parents=True)
    (inside / "memory.max").write_text("100")
    assert limit.verify([1]) == "cgroup v2 memory.max=100, read back and verified for 1 process(es)"
    assert limit.verify([1, 3]).endswith("verified for 2 process(es)")
    assert (
        limit.verify([1, 2])
        == "not applied: process 2 in /elsewhere, not /wsgibench/owner-1 (memory.max=100)"
    )
    assert MemoryCgroup(root / "other", "x", 100, 2).verify([1]) == (
        "not applied: asked for memory.max=100, the group holds no limit or none readable"
    )


def test_the_kill_group_reads_its_processes_and_cpu(tmp_path: Path):
    group = KillGroup(tmp_path)
    assert group.pids() == [] and group.cpu_usage_s() is None
    (tmp_path / "cgroup.procs").write_text("12\n34\n")
    (tmp_path / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\n")
    assert group.pids() == [12, 34] and group.cpu_usage_s() == 1.5
    (tmp_path / "cpu.stat").write_text("user_usec 1000000\n")
    assert group.cpu_usage_s() is None
    (tmp_path / "cpu.stat").write_text("usage_usec many\n")
    assert group.cpu_usage_s() is None
    group.kill()
    assert (tmp_path / "cgroup.kill").read_text() == "1"
    group.join_self()
    assert (tmp_path / "cgroup.procs").read_text() == "0"
    none = KillGroup(None)
    none.kill(), none.join_self(), none.remove()
    assert (none.pids(), none.cpu_usage_s()) == ([], None)
    KillGroup(tmp_path / "gone").kill()  # a group already removed: nothing to kill


def test_a_kill_group_needs_a_v2_hierarchy_with_cgroup_kill(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(cgroups, "_V2_ROOTS", (tmp_path / "none",))
    assert KillGroup.create().path is None
    root = _hierarchy(tmp_path / "root")
    monkeypatch.setattr(cgroups, "_V2_ROOTS", (tmp_path / "none", root))
    # a plain directory is made, with no cgroup.kill in it: not a group that can kill
    assert KillGroup.create().path is None
    made = list((root / "wsgibench").iterdir())
    assert len(made) == 1 and re.fullmatch(rf"owner-{os.getpid()}-[0-9a-f]{{8}}", made[0].name)
    real = Path.mkdir

    def cgroupfs_mkdir(path: Path, *args: object, **kwargs: object) -> None:
        real(path, *args, **kwargs)  # the kernel fills a new group with its files
        (path / "cgroup.kill").write_text("")

    monkeypatch.setattr(Path, "mkdir", cgroupfs_mkdir)
    group = KillGroup.create()
    assert group.path is not None and group.path.parent == root / "wsgibench"
    # a v1 hierarchy's root has cgroup.procs but no cgroup.controllers: not v2
    v1 = tmp_path / "v1"
    v1.mkdir()
    (v1 / "cgroup.procs").write_text("")
    monkeypatch.setattr(cgroups, "_V2_ROOTS", (v1,))
    assert KillGroup.create().path is None and not (v1 / "wsgibench").exists()


def test_removing_a_group_waits_a_bounded_second_for_the_kernel(tmp_path: Path, monkeypatch):
    naps: list[float] = []
    monkeypatch.setattr(cgroups.time, "sleep", naps.append)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "cgroup.procs").write_text("1")  # a plain file: rmdir fails as on a group not empty
    KillGroup(busy).remove()
    assert naps == [0.02] * 50 and busy.exists()
    (busy / "cgroup.procs").unlink()
    KillGroup(busy).remove()
    assert not busy.exists() and len(naps) == 50


def _no_such_pid() -> int:
    """A pid above the kernel's largest: no process has it."""
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def test_the_sweep_kills_and_removes_only_groups_of_dead_runs(tmp_path: Path, monkeypatch):
    alive, dead, busy = 999_000, 999_001, 999_003  # run pids; only `dead` has exited
    sent: list[tuple[int, int]] = []

    def kill(pid: int, sig: int) -> None:  # no signal reaches a real process
        if sig == 0:
            if pid == dead:
                raise ProcessLookupError(pid)
            if pid == busy:
                raise PermissionError(pid)  # another user's process: alive
            return
        sent.append((pid, sig))
        raise ProcessLookupError(pid)

    naps: list[float] = []
    monkeypatch.setattr(cgroups.os, "kill", kill)
    monkeypatch.setattr(cgroups.time, "sleep", naps.append)
    root = _hierarchy(tmp_path / "root")
    monkeypatch.setattr(cgroups, "_V2_ROOTS", (root,))
    # in name order: an alive run's group first, then two of the dead run's, then a busy one's
    for name, procs in (
        (f"owner-{alive}-aa", "1"),
        (f"owner-{dead}-aa", "11\n12\n"),
        (f"owner-{dead}-bb", "13\n"),
        (f"owner-{busy}-aa", "2"),
    ):
        (root / "wsgibench" / name).mkdir(parents=True)
        (root / "wsgibench" / name / "cgroup.procs").write_text(procs)
    v1 = tmp_path / "memory"
    for name, procs in (
        (f"wsgibench-{alive}-aa", "3"),
        (f"wsgibench-{dead}-aa", None),  # its processes unreadable: left alone
        (f"wsgibench-{dead}-bb", "21\n22"),
        (f"wsgibench-{dead}-cc", "23"),
    ):
        (v1 / name).mkdir(parents=True)
        if procs:
            (v1 / name / "cgroup.procs").write_text(procs)
    monkeypatch.setattr(cgroups, "_V1_MEMORY", v1)
    monkeypatch.setattr(cgroups, "V1_CPU", tmp_path / "no-cpu-hierarchy")
    assert cgroups.sweep_orphans() == [11, 12, 13, 21, 22, 23]
    # v2: cgroup.kill written (the directories are not real groups, so they stay)
    for name, killed in (
        (f"owner-{dead}-aa", True),
        (f"owner-{dead}-bb", True),
        (f"owner-{alive}-aa", False),
        (f"owner-{busy}-aa", False),
    ):
        assert (root / "wsgibench" / name / "cgroup.kill").exists() == killed
    assert sent == [(pid, signal.SIGKILL) for pid in (21, 22, 23)]
    assert (v1 / f"wsgibench-{dead}-aa").exists() and (v1 / f"wsgibench-{alive}-aa").exists()
    assert naps == [0.02] * 50 * 4  # each group that stayed waited its bounded second
    monkeypatch.setattr(cgroups, "_V2_ROOTS", (tmp_path / "none",))
    monkeypatch.setattr(cgroups, "_V1_MEMORY", tmp_path / "none")
    assert cgroups.sweep_orphans() == []


def test_an_empty_v1_group_of_a_dead_run_is_removed(tmp_path: Path, monkeypatch):
    assert cgroups._alive(os.getpid()) and not cgroups._alive(_no_such_pid())
    monkeypatch.setattr(
        cgroups.os, "kill", lambda pid, sig: (_ for _ in ()).throw(ProcessLookupError)
    )
    group = tmp_path / "wsgibench-999001-ab"
    group.mkdir()
    real_read = Path.read_text
    monkeypatch.setattr(
        Path,
        "read_text",
        lambda p, *a, **k: "" if p.name == "cgroup.procs" else real_read(p, *a, **k),
    )
    assert cgroups._sweep_v1(tmp_path) == [] and not group.exists()
