"""Interrupt `wsgibench run` for real (SIGKILL, SIGINT, SIGTERM) mid-cell, then `--resume`: the cells
match an uninterrupted run, none twice, none lost, the store is sound, and no process survives."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wsgibench.results.store import Store

from .helpers import require
from .procs import TAG_VAR, describe, new_tag, none_left, tagged

SERVERS = ["wsgiref", "gunicorn-sync"]  # one process, and an arbiter with a worker


@pytest.fixture(scope="module")
def study_file(tmp_path_factory) -> Path:
    for name in SERVERS:
        require(name)
    path = tmp_path_factory.mktemp("interrupt") / "small.toml"
    path.write_text(f"""
name = "small"
servers = {json.dumps(SERVERS)}
repeats = 1
[[load]]
name = "closed"
model = "closed"
levels = [2, 4, 8]
duration_s = 1.5
warmup_s = 0
""")
    return path


def _spawn(study: Path, results: Path, tag: str, *extra: str) -> subprocess.Popen:
    env = {**os.environ, TAG_VAR: tag}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wsgibench",
            "run",
            str(study),
            "--results",
            str(results),
            "--no-install",
            *extra,
        ],
        env=env,
        # Ctrl-C as a terminal sends it, whatever this process inherited: a shell's background job
        # ignores SIGINT, and a Python started ignoring it keeps ignoring it (no KeyboardInterrupt)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _cells(results: Path) -> list[tuple]:
    store = Store(results, create=False)
    rows = [(s["id"], s["status"]) for s in store.studies()]
    assert len(rows) == 1, rows  # a resumed run continues its study, never starts another
    cells = [
        (c.server, c.load, c.level, c.status, len(store.repeats(c.id)))
        for c in store.cells(rows[0][0])
    ]
    store.close()
    return cells


def _committed(results: Path) -> int:
    if not results.exists():
        return 0
    try:
        with sqlite3.connect(results, timeout=5) as db:
            return db.execute("SELECT count(*) FROM cells").fetchone()[0]
    except sqlite3.Error:
        return 0


def _wait_mid_cell(proc: subprocess.Popen, results: Path, tag: str) -> None:
    """Until one cell is committed and the next cell's server runs (a child besides the engine)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if _committed(results) >= 1:
            servers = [
                p
                for p in tagged(tag)
                if p.pid != proc.pid and "wsgibench-engine" not in " ".join(p.cmdline())
            ]
            if servers:
                time.sleep(0.8)  # inside the repeat
                return
        time.sleep(0.05)
    raise AssertionError("the run never reached its second cell")


@pytest.fixture(scope="module")
def uninterrupted(study_file, tmp_path_factory) -> list[tuple]:
    results = tmp_path_factory.mktemp("full") / "r.sqlite"
    proc = _spawn(study_file, results, new_tag())
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    cells = _cells(results)
    assert len(cells) == len(SERVERS) * 3
    return cells


def _normal(cells: list[tuple]) -> set[tuple]:
    """The cell set; a status may differ between runs only as measured vs invalid (saturation)."""
    return {
        (
            server,
            load,
            level,
            "ok" if status in ("measured", "contended", "invalid") else status,
            reps,
        )
        for server, load, level, status, reps in cells
    }


@pytest.mark.parametrize(
    "sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM], ids=["SIGKILL", "SIGINT", "SIGTERM"]
)
def test_interrupt_then_resume(sig, study_file, uninterrupted, tmp_path):
    results = tmp_path / "r.sqlite"
    tag = new_tag()
    proc = _spawn(study_file, results, tag)
    _wait_mid_cell(proc, results, tag)
    before = _committed(results)
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=15)  # bounded: stop grace 5 s, engine killed at once
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:
        assert proc.returncode == 130, err[-2000:]
        assert "interrupted" in err and "Traceback" not in err
        assert none_left(tag) == []  # a graceful interruption stops everything itself
    # The store a killed run leaves is sound and holds whole cells only.
    with sqlite3.connect(results) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    cells = _cells(results)
    assert before <= len(cells) < len(uninterrupted)
    assert all(reps == 1 for *_, status, reps in cells if status in ("measured", "contended"))
    status = Store(results, create=False).study()["status"]
    assert status == ("running" if sig == signal.SIGKILL else "interrupted")
    if sig == signal.SIGKILL:
        # The engine and the servers' main processes die with wsgibench (PR_SET_PDEATHSIG); what
        # else is left (workers) is killed by the next run's orphan sweep.
        time.sleep(0.5)
        leftover = describe(tagged(tag))
        assert not any("wsgibench-engine" in line for line in leftover), leftover
    resume = _spawn(study_file, results, tag, "--resume")
    out, err = resume.communicate(timeout=300)
    assert resume.returncode == 0, err[-2000:]
    resumed = _cells(results)
    assert len(resumed) == len(set((s, load, lv) for s, load, lv, *_ in resumed))  # no duplicates
    assert _normal(resumed) == _normal(uninterrupted)
    assert Store(results, create=False).study()["status"] == "finished"
    assert none_left(tag) == []
