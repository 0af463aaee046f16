"""`wsgibench compare` end to end on real studies: same store, a real 2x slowdown, and mixed machines."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from wsgibench.results.compare import compare_stores
from wsgibench.results.store import Store

from .test_report_helpers import run_study, wsgibench

pytestmark = pytest.mark.e2e

SERVER = "gunicorn-gthread"
REPEATS = 3  # over 3 server starts (the default): Student's t on the starts' medians


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("compare")
    fast = run_study(folder, "pong", [SERVER], [4], repeats=REPEATS, app="pong")
    slow = run_study(folder, "pong-slow", [SERVER], [4], repeats=REPEATS, app="pong_slow")
    return fast, slow


def test_identical_inputs_show_no_significant_change(stores, tmp_path):
    fast, _ = stores
    md = tmp_path / "same.md"
    named = ["--study-a", "1", "--study-b", "1"]  # a run against itself only when both are named
    proc = wsgibench("compare", str(fast), str(fast), *named, "--markdown", str(md))
    assert "no change detected" in proc.stdout
    verdicts = proc.stdout.split("summary:")[0]  # the method note after it names every word
    assert "regressed" not in verdicts and "improved" not in verdicts
    result = compare_stores(Store(fast, create=False), Store(fast, create=False))
    # (a verdict may name a contended side after it: the verdict itself is what is checked)
    assert [c.outcome.split(" [")[0] for c in result.cells] == ["no change detected"]
    assert result.cells[0].verdicts["rps_ok"].p_value == 1.0
    assert "no change detected" in md.read_text()
    alone = wsgibench("compare", str(fast), check=False)  # one run: nothing before it
    assert alone.returncode == 2 and "holds no run of 'pong' before study 1" in alone.stderr


def test_real_slowdown_is_significant(stores, tmp_path):
    fast, slow = stores
    result = compare_stores(Store(fast, create=False), Store(slow, create=False))
    (cell,) = result.cells
    rps = cell.verdicts["rps_ok"]
    assert rps.n_a == rps.n_b == 3  # server starts
    assert rps.median_b < 0.5 * rps.median_a, (rps.median_a, rps.median_b)  # at least 2x slower
    assert rps.significant and rps.p_value < 0.05 and rps.method.startswith("Student's t")
    assert cell.outcome.startswith("regressed") and cell.adjusted["rps_ok"] < 0.05
    md = tmp_path / "slow.md"
    proc = wsgibench("compare", str(fast), str(slow), "--markdown", str(md))
    assert "regressed" in proc.stdout
    text = md.read_text()
    assert "| gunicorn-gthread | closed | 4 |" in text and "regressed (throughput" in text


def _edit_environment(src: Path, dst: Path, **changes) -> Path:
    shutil.copy(src, dst)
    db = sqlite3.connect(dst)
    with db:
        for study_id, env_json in db.execute("SELECT id, environment_json FROM studies").fetchall():
            env = json.loads(env_json)
            for key, value in changes.items():
                if key == "engine_version":
                    env["engine"]["engine_version"] = value
                else:
                    env[key] = value
            db.execute(
                "UPDATE studies SET environment_json=? WHERE id=?", (json.dumps(env), study_id)
            )
    db.close()
    return dst


def test_mixed_machines_refused_unless_forced(stores, tmp_path):
    fast, _ = stores
    other = _edit_environment(fast, tmp_path / "other.sqlite", cpu_model="Imaginary CPU 9000")
    proc = wsgibench("compare", str(fast), str(other), check=False)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "cpu_model" in lines[0] and "Imaginary CPU 9000" in lines[0] and "--force" in lines[0]
    assert "Traceback" not in proc.stderr
    forced = wsgibench("compare", str(fast), str(other), "--force")
    assert "no change detected" in forced.stdout and "forced" in forced.stdout


def test_different_engine_versions_refused(stores, tmp_path):
    fast, _ = stores
    other = _edit_environment(fast, tmp_path / "engine.sqlite", engine_version="9.9.9")
    proc = wsgibench("compare", str(fast), str(other), check=False)
    assert proc.returncode == 2 and "engine_version" in proc.stderr and "9.9.9" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    forced = wsgibench("compare", str(fast), str(other), "--force")
    assert "forced: the two differ in engine_version" in forced.stdout
    assert "no change detected" in forced.stdout
