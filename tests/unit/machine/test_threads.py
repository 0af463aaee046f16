"""Per-thread accounting from /proc, on synthetic readings: a stat line's fields (a name with
spaces and parentheses), the groups (main thread, a runtime's named threads, unnamed threads, the
workers apart from the main process), threads born in the window, and threads that ended."""

from __future__ import annotations

from pathlib import Path

from wsgibench.machine.threads import ThreadAccount, ThreadStat, parse_stat, read_threads


def _stat(name: str, ppid: int, utime: int, stime: int) -> str:
    return f"12 ({name}) S {ppid} 12 12 0 -1 4194560 100 0 0 0 {utime} {stime} 0 0 20 0 3 0\n"


def test_a_stat_line_with_spaces_and_parentheses_in_its_name():
    got = parse_stat(_stat("tokio (rt) w", 7, 150, 50))
    assert got is not None and got.name == "tokio (rt) w" and got.ppid == 7
    assert abs(got.cpu_s - 2.0) < 1e-9  # 200 ticks of 10 ms
    assert parse_stat("garbage") is None


def test_threads_read_from_a_proc_tree(tmp_path: Path):
    for tid, name in ((40, "granian"), (41, "tokio-rt-worker")):
        task = tmp_path / "40" / "task" / str(tid)
        task.mkdir(parents=True)
        (task / "stat").write_text(_stat(name, 1, 10, 0))
    (tmp_path / "40" / "stat").write_text(_stat("granian", 1, 30, 0))
    procs: dict[int, float] = {}
    found = read_threads([40, 99], tmp_path, procs)  # 99 has exited
    assert {(t.tid, t.name, t.process_name) for t in found} == {
        (40, "granian", "granian"),
        (41, "tokio-rt-worker", "granian"),
    }
    assert procs == {40: 0.3}


def T(pid: int, tid: int, name: str, cpu: float, ppid: int = 1, proc: str = "granian"):
    return ThreadStat(pid, tid, name, proc, cpu, ppid)


def test_groups_births_and_ends_over_a_window():
    acc = ThreadAccount()
    start = [T(10, 10, "granian", 1.0), T(11, 11, "granian", 0.5, ppid=10)]
    acc.observe([10, 11], 0.0, start, {10: 1.0, 11: 0.5})
    later = [
        T(10, 10, "granian", 1.1),
        T(11, 11, "granian", 0.9, ppid=10),
        T(11, 12, "tokio-rt-worker-3", 0.8, ppid=10),  # born in the window: counts from zero
        T(11, 13, "granian", 0.2, ppid=10),
    ]
    acc.observe([10, 11], 1.0, later, {10: 1.1, 11: 2.4})
    # thread 13 ended after the first reading; its process's time keeps what it used
    end = [T(10, 10, "granian", 1.2), T(11, 11, "granian", 1.3, ppid=10),
           T(11, 12, "tokio-rt-worker-3", 1.6, ppid=10)]  # fmt: skip
    acc.observe([10, 11], 2.0, end, {10: 1.2, 11: 3.6})
    groups = acc.groups_cpu_s()
    assert acc.first_pid == 10
    assert round(groups["main process: main thread"], 3) == 0.2
    assert round(groups["workers: main thread"], 3) == 0.8
    assert round(groups["workers: runtime tokio-rt-worker"], 3) == 1.6
    assert round(groups["workers: other threads"], 3) == 0.2
    assert round(groups["workers: threads that ended"], 3) == 0.5  # 3.1 - (0.8 + 1.6 + 0.2)
    use = acc.summary()
    assert use is not None and use.threads_peak == 4 and use.processes == 2
    assert abs(use.cores_used - (0.2 + 3.1) / 2.0) < 1e-9
    assert use.names == {"granian": 3, "tokio-rt-worker-3": 1}


def test_one_reading_is_no_window():
    acc = ThreadAccount()
    acc.observe([1], 0.0, [T(1, 1, "python", 1.0, ppid=0)], {1: 1.0})
    assert acc.summary() is None
