"""Seed 000's session study at small scale: timelines stored, nothing dropped, a timeline chart."""

from __future__ import annotations

import json
import subprocess
import sys

from wsgibench.results.store import Store
from wsgibench.run.study import StudyRunner
from wsgibench.study.model import load_study, parse_study

from .helpers import expect_measured, require


def test_c10k_study_is_the_seed_scaled_down():
    study = load_study("piel2010-c10k")
    (load,) = study.loads
    assert load.model == "sessions" and load.params["requests"] == 13  # tsung's loop from 0 to 12
    assert load.params["think_s"] == 5.0


def test_small_session_study_end_to_end(tmp_path):
    require("gevent-pywsgi")
    spec = {
        "name": "c10k-small",
        "servers": ["gevent-pywsgi"],
        "repeats": 1,
        "load": [
            {
                "name": "sessions",
                "model": "sessions",
                "levels": [50],
                "duration_s": 10.0,
                "requests": 12,
                "think_s": 0.5,
                "warmup_s": 0.0,
            }
        ],
    }
    store = Store(tmp_path / "r.sqlite")
    study_id = StudyRunner(parse_study(spec, "c10k-small"), store).run()
    (cell,) = store.cells(study_id)
    expect_measured(cell)
    (rep,) = store.repeats(cell.id)
    extra = json.loads(rep["extra_json"])
    assert extra["expected_requests"] == 50 * 10 * 12
    assert extra["nothing_dropped"] is True
    engine = json.loads(rep["engine_json"])
    timeline = engine["timeline"]
    assert len(timeline) >= 10
    assert max(t["open_connections"] for t in timeline) > 20  # users overlap while they think
    samples = store.samples(rep["id"])
    assert any(s["conns"] for s in samples) and any(s["load1"] is not None for s in samples)
    out = tmp_path / "report"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "wsgibench",
            "report",
            str(tmp_path / "r.sqlite"),
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert list((out / "charts").glob("timeline*.png"))
