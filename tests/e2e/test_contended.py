"""A contended cell is a status, never a ranking: through the installed script, two studies of two
good servers run while a process of this test spins on the server's CPU. Every cell is contended
(or invalid, where the engine's CPU was taken as well); `show` ranks none of them, the report's
findings crown none, and `history` leaves the runs out of its search for changes, saying so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wsgibench.results.history import read_history
from wsgibench.results.store import Store

from .helpers import cli

pytestmark = pytest.mark.e2e

STUDY = """
name = "contended-e2e"
servers = ["fault-counted", "fault-sigterm"]
repeats = 1
starts = 1
server_cpus = [0]
engine_cpus = [1]

[[load]]
name = "c"
model = "closed"
levels = [4]
duration_s = 1
warmup_s = 0.3
"""


def _spin_on_cpu0() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["taskset", "-c", "0", sys.executable, "-c", "while True: pass"],
        start_new_session=True,
    )


def test_contended_cells_are_shown_and_never_ranked_crowned_or_in_history(tmp_path: Path):
    (tmp_path / "c.toml").write_text(STUDY)
    hog = _spin_on_cpu0()
    try:
        for run in ("one", "two"):
            done = subprocess.run(
                cli("run", "c.toml", "--results", f"{run}.sqlite"),
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    finally:
        hog.kill()
        hog.wait()
    store = Store(tmp_path / "one.sqlite", create=False, read_only=True)
    cells = store.cells(store.study()["id"])
    # contended (other work on the server's CPU), or invalid where the engine's CPU was taken
    # too (starved): the machine's verdict either way, never a number that is ranked
    statuses = [c.status for c in cells]
    assert cells and set(statuses) <= {"contended", "invalid"} and "contended" in statuses
    shown = subprocess.run(
        cli("show", "one.sqlite"), cwd=tmp_path, capture_output=True, text=True, timeout=60
    ).stdout
    assert "were contended" in shown and "not ranked" in shown, shown
    report = tmp_path / "one-report"
    subprocess.run(
        cli("report", "one.sqlite", "--out", str(report)),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    findings = (report / "summary.md").read_text()
    assert " leads " not in findings and "tied within noise" not in findings
    groups = read_history([tmp_path / "one.sqlite", tmp_path / "two.sqlite"])
    timelines = [t for g in groups for t in g.timelines]
    assert timelines and all(not t.measured() for t in timelines)
    assert all("contended" in t.left_out() for t in timelines)
    assert all(not t.rps_changes and not t.p99_changes for t in timelines)
