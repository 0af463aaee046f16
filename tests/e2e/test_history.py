"""History over real runs, through the installed script: eight runs of one small study on
gunicorn's gthread worker (one, 8 threads, 8 connections) serving the sleep app (10 ms a
request), the app sleeping 10 % longer from the fifth run on, and eight runs without a change.
`history` finds the step at the fifth run and nowhere else, finds nothing in the steady runs, and
its gate fails the run that is slower than the stable level before it.

The requests sleep side by side, so req/s is about 8 / (sleep + a fraction of a millisecond) and
falls by about 9 % (about 750 to 690). On one sync worker (the test's first form) each request's
own cost (a new connection, accept, parse: 2-3 ms on this VM) came on top of the sleep in series:
req/s fell by only 5-7 %, next to the 5 % smallest step, and one CI run missed it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from wsgibench.results.history import read_history

from .helpers import cli, require

STUDY = """
name = "history-e2e"
servers = ["gunicorn-gthread"]
app = "sleep"
workers = 1
threads = 8
repeats = 3
random_order = false

[[load]]
name = "c"
model = "closed"
levels = [8]
duration_s = 1.0
warmup_s = 0.3
"""


def _runs(folder: Path, sleeps_ms: list[float]) -> Path:
    folder.mkdir()
    (folder / "h.toml").write_text(STUDY)
    for i, sleep_ms in enumerate(sleeps_ms):
        proc = subprocess.run(
            cli("run", "h.toml", "--results", f"run-{i}.sqlite", "--no-report",
                "--app-env", f"WSGIBENCH_SLEEP_S={sleep_ms / 1000}"),
            capture_output=True, text=True, timeout=300, cwd=folder,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return folder


def test_a_ten_percent_slowdown_is_found_at_its_run_and_steady_runs_show_none(tmp_path: Path):
    require("gunicorn-gthread")
    slowed = _runs(tmp_path / "slowed", [10.0] * 4 + [11.0] * 4)
    (group,) = read_history([slowed])
    (timeline,) = group.timelines
    (change,) = timeline.rps_changes
    assert change.index == 4 and change.kind == "step", timeline.rps_changes
    assert -0.13 < change.size < -0.05, change
    steady = _runs(tmp_path / "steady", [10.0] * 8)
    (group,) = read_history([steady])
    assert group.timelines[0].rps_changes == [], group.timelines[0].rps_changes
    said = subprocess.run(
        cli("history", str(slowed), "--fail-on-regression", "5%"),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    # the step began four runs ago: the newest run is at its new level, a finding, no failure
    assert said.returncode == 0 and "regression in req/s" in said.stdout, said.stdout[-3000:]
    assert "step at run 5" in said.stdout
