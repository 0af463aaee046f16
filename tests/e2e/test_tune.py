"""`wsgibench tune` through the installed script, on two settings whose order is known: the sleep
app (50 ms a request) on gunicorn's gthread worker with 1 and with 8 threads, within a p99 budget
of 200 ms. 8 threads must win, by about 8 times, and the winner's command line must say so. A
budget of two trials ends the search after its first round (a second would refine the winner)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from wsgibench.results.capacity_read import read_capacities
from wsgibench.results.store import Store

from .helpers import cli, require
from .procs import none_left


def test_tune_ranks_eight_threads_over_one(tmp_path: Path, own_tag: str):
    require("gunicorn-gthread")
    argv = cli(
        "tune", "gunicorn-gthread", "--app", "sleep", "--app-env", "WSGIBENCH_SLEEP_S=0.05",
        "--p99-ms", "200", "--workers", "1", "--threads", "1,8", "--trials", "2",
        "--results", "t.sqlite",
    )  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "internal error" not in said, said[-3000:]
    assert "best: gunicorn-gthread w1 t8" in said, said[-3000:]
    # two trials, both in the first round: the search stops there and says why
    assert "stopped: the trial budget" in said, said[-3000:]
    assert "--threads 8" in said and "--worker-class gthread" in said
    assert "gunicorn-gthread w1: more threads were better up to 8" in said
    store = Store(tmp_path / "t.sqlite", read_only=True)
    first = {c.load: c for c in read_capacities(store, 1)}  # round 1: every setting
    one = first["r1 gunicorn-gthread w1 t1"]
    eight = first["r1 gunicorn-gthread w1 t8"]
    cap1, cap8 = one.requests(one.result.capacity), eight.requests(eight.result.capacity)
    assert cap1 and cap8 and 4 < cap8 / cap1 < 12, (cap1, cap8)
    # one thread of 50 ms requests: at most 20 a second, whatever the budget
    assert cap1 <= 20 * 1.1
    shown = subprocess.run(cli("show", "t.sqlite"), capture_output=True, text=True, cwd=tmp_path)
    assert shown.returncode == 0 and "best: gunicorn-gthread w1 t8" in shown.stdout, shown.stdout
    report = subprocess.run(
        cli("report", "t.sqlite", "--out", "rep"), capture_output=True, text=True, cwd=tmp_path
    )
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "Tuning gunicorn-gthread" in html and "--threads 8" in html
    assert none_left(own_tag) == []  # of the processes this test started
