"""`wsgibench compare` end to end on real studies: two runs of the same server (A/A) and a real 2x
slowdown, each p-value the one Student's t gives on the stored server starts' medians (computed
here apart from the tool); a run named against itself; and mixed machines."""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
import statistics
from pathlib import Path

import pytest
from scipy.stats import ttest_ind

from wsgibench.results.compare import METRICS, compare_stores
from wsgibench.results.store import Store

from .helpers import expect_measured
from .test_report_helpers import run_study, wsgibench

pytestmark = pytest.mark.e2e

SERVER = "gunicorn-gthread"
REPEATS = 3  # over 3 server starts (the default): Student's t on the starts' medians


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("compare")
    fast = run_study(folder, "pong", [SERVER], [4], repeats=REPEATS, app="pong")
    slow = run_study(folder, "pong-slow", [SERVER], [4], repeats=REPEATS, app="pong_slow")
    again = folder / "again"
    again.mkdir()
    return fast, slow, run_study(again, "pong", [SERVER], [4], repeats=REPEATS, app="pong")


def _measured(*paths: Path) -> None:
    """Each store's cell was measured (a contended one, cut short, fails as the machine busy)."""
    for path in paths:
        store = Store(path, create=False, read_only=True)
        for cell in store.cells(store.study()["id"]):
            expect_measured(cell, path.name)


def _p_from_the_stores(a: Path, b: Path, column: str) -> float:
    """Student's t (pooled variance, two-sided) on the logs of each side's server starts'
    medians of `column`, read from the stores' repeats (each repeat's start in its extra_json)."""

    def start_medians(path: Path) -> list[float]:
        store = Store(path, create=False, read_only=True)
        (cell,) = store.cells(store.study()["id"])
        starts: dict[int, list[float]] = {}
        for row in store.repeats(cell.id):
            start = json.loads(row["extra_json"] or "{}").get("start", 0)
            starts.setdefault(start, []).append(float(row[column]))
        return [math.log(statistics.median(v)) for _, v in sorted(starts.items())]

    return float(ttest_ind(start_medians(a), start_medians(b), equal_var=True).pvalue)


def test_two_runs_of_one_server_are_judged_on_their_own_starts(stores, tmp_path):
    fast, _, again = stores
    _measured(fast, again)
    result = compare_stores(Store(fast, create=False), Store(again, create=False))
    (cell,) = result.cells
    for column, _, _ in METRICS:
        verdict = cell.verdicts[column]
        assert verdict.n_a == verdict.n_b == REPEATS  # server starts, one repeat each
        assert verdict.p_value == pytest.approx(_p_from_the_stores(fast, again, column), rel=1e-9)
    md = tmp_path / "aa.md"
    proc = wsgibench("compare", str(fast), str(again), "--markdown", str(md))
    assert f"| {SERVER} | closed | 4 |" in md.read_text() and SERVER in proc.stdout


def test_a_run_named_against_itself_is_no_change(stores, tmp_path):
    fast, _, _ = stores
    _measured(fast)
    md = tmp_path / "same.md"
    named = ["--study-a", "1", "--study-b", "1"]  # a run against itself only when both are named
    proc = wsgibench("compare", str(fast), str(fast), *named, "--markdown", str(md))
    assert "no change detected" in proc.stdout and "no change detected" in md.read_text()
    verdicts = proc.stdout.split("summary:")[0]  # the method note after it names every word
    assert "regressed" not in verdicts and "improved" not in verdicts
    alone = wsgibench("compare", str(fast), check=False)  # one run: nothing before it
    assert alone.returncode == 2 and "holds no run of 'pong' before study 1" in alone.stderr


def test_real_slowdown_is_significant(stores, tmp_path):
    fast, slow, _ = stores
    _measured(fast, slow)
    result = compare_stores(Store(fast, create=False), Store(slow, create=False))
    (cell,) = result.cells
    rps = cell.verdicts["rps_ok"]
    assert rps.n_a == rps.n_b == 3  # server starts
    assert rps.p_value == pytest.approx(_p_from_the_stores(fast, slow, "rps_ok"), rel=1e-9)
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
    fast, _, _ = stores
    _measured(fast)
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
    fast, _, _ = stores
    _measured(fast)
    other = _edit_environment(fast, tmp_path / "engine.sqlite", engine_version="9.9.9")
    proc = wsgibench("compare", str(fast), str(other), check=False)
    assert proc.returncode == 2 and "engine_version" in proc.stderr and "9.9.9" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    forced = wsgibench("compare", str(fast), str(other), "--force")
    assert "forced: the two differ in engine_version" in forced.stdout
    assert "no change detected" in forced.stdout
