"""`wsgibench run` end to end: real servers, the real engine, a real store; then show and export."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import threading

import pytest

from wsgibench.results.store import Store
from wsgibench.run.study import StudyRunner
from wsgibench.study.model import parse_study

from .helpers import cli, expect_measured, measured_or_engine_bound, require, server_flags
from .quiet import quiet_cpus

SERVERS = ["nginx-baseline", "gunicorn-gthread", "gunicorn-sync"]


def _cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cli(*args), capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.fixture(scope="module")
def small_study(tmp_path_factory):
    for name in SERVERS:
        require(name)
    folder = tmp_path_factory.mktemp("study")
    (folder / "small.toml").write_text(f"""
name = "small"
servers = {json.dumps(SERVERS)}
repeats = 2
[[load]]
name = "closed"
model = "closed"
levels = [4, 16]
duration_s = 1.0
warmup_s = 0.3
""")
    results = folder / "results.sqlite"
    with quiet_cpus() as quiet:  # the sampler keeps its 10 Hz only on CPUs nothing else takes
        proc = _cli("run", str(folder / "small.toml"), "--results", str(results))
    return results, proc.stdout, quiet


def test_every_cell_measured_with_its_records(small_study):
    results, stdout, quiet = small_study
    store = Store(results, create=False)
    study = store.study()
    assert study["status"] == "finished"
    env = json.loads(study["environment_json"])
    assert env["engine"]["protocol_version"] == 1 and env["cpu_model"] and env["kernel"]
    cells = store.cells(study["id"])
    assert {(c.server, c.level) for c in cells} == {
        (s, level) for s in SERVERS for level in (4, 16)
    }
    for cell in cells:
        if cell.server == "nginx-baseline":
            assert measured_or_engine_bound(cell), (cell.server, cell.status, cell.reason)
        else:
            expect_measured(cell, cell.server)
        assert cell.isolation["server_cpus"] != cell.isolation["engine_cpus"] or os.cpu_count() == 1
        reps = store.repeats(cell.id)
        assert len(reps) == 2
        for rep in reps:
            engine = json.loads(rep["engine_json"])
            assert rep["ok"] > 0 and rep["errors"] == 0, engine["totals"]
            totals = engine["totals"]
            # the engine's own count: never more than `level` connections at once; a server that
            # keeps them alive got `level` of them, one each for the whole repeat
            assert 1 <= totals["peak_open_connections"] <= cell.level, totals
            if cell.capabilities["keep_alive"]:
                assert totals["peak_open_connections"] == cell.level, totals
                assert totals["connections_opened"] == cell.level, totals
            assert rep["rss_peak_bytes"] > 0 and rep["cpu_mean_pct"] > 0
            with quiet.figures():
                assert len(store.samples(rep["id"])) >= 5  # >= 10 Hz over 1 s
        assert cell.server_info["version"]
    sync = [c for c in cells if c.server == "gunicorn-sync"]
    assert all(not c.capabilities["keep_alive"] for c in sync)
    assert all(any(d["code"] == "no-keep-alive" for d in c.diagnoses) for c in sync)
    for c in cells:
        if c.server == "nginx-baseline":
            assert not server_flags(c.diagnoses), (c.level, c.diagnoses)
    assert "gunicorn-gthread" in stdout


def test_show_and_export(small_study):
    results, _, _ = small_study
    shown = _cli("show", str(results)).stdout
    assert "nginx-baseline" in shown and "req/s" in shown
    # into a pipe, the tables are whole (at a terminal's width they split: test_show_formats.py)
    # each level's table: the ceiling first, then the servers by descending req/s
    for table in shown.split("┏")[1:]:
        head = next(line.split("┃") for line in table.splitlines() if line.startswith("┃"))
        column = [h.strip() for h in head].index("req/s")
        rows = [line.split("│") for line in table.splitlines() if line.startswith("│")]
        assert rows[0][1].strip().startswith("▲ nginx-baseline")
        rps = [float(r[column].strip().replace(",", "")) for r in rows[1:]]
        assert rps == sorted(rps, reverse=True), rps
    rows = list(csv.DictReader(io.StringIO(_cli("export", str(results), "--format", "csv").stdout)))
    assert len(rows) == 6
    assert all(float(r["rps_ok_median"]) > 0 for r in rows)
    doc = json.loads(_cli("export", str(results), "--format", "json").stdout)
    assert doc["schema_version"] == 1 and len(doc["cells"]) == 6
    assert all(len(c["repeats"]) == 2 and c["repeats"][0]["engine"]["kinds"] for c in doc["cells"])


def test_killed_server_is_disqualified_and_study_finishes(tmp_path):
    for name in ("gunicorn-gthread", "nginx-baseline"):
        require(name)
    study = parse_study(
        {
            "name": "crash",
            "servers": ["gunicorn-gthread", "nginx-baseline"],
            "repeats": 3,
            "random_order": False,
            "load": [
                {
                    "name": "closed",
                    "model": "closed",
                    "levels": [4, 8],
                    "duration_s": 1.5,
                    "warmup_s": 0.2,
                }
            ],
        },
        "crash",
    )
    store = Store(tmp_path / "r.sqlite")
    runner = StudyRunner(study, store)
    killed, seen = [], []

    def progress(msg: str) -> None:
        if runner.current_server:
            seen.extend(runner.current_server.processes())
        if msg.startswith("gunicorn-gthread") and msg.endswith("repeat 2/3") and not killed:
            server = runner.current_server
            killed.append(server.main_pid)
            threading.Timer(0.5, os.killpg, (server.main_pid, signal.SIGKILL)).start()

    runner.progress = progress
    study_id = runner.run()
    assert killed
    cells = {(c.server, c.level): c for c in store.cells(study_id)}
    first = cells[("gunicorn-gthread", 4)]
    assert first.status == "disqualified" and "repeat 2" in first.reason, first.reason
    later = cells[("gunicorn-gthread", 8)]
    assert later.status == "disqualified" and later.reason.startswith(
        "disqualified at connections 4"
    )
    assert measured_or_engine_bound(cells[("nginx-baseline", 8)])  # the study went on
    assert store.study(study_id)["status"] == "finished"
    assert len(seen) > 4
    assert [p.pid for p in seen if p.is_running() and p.status() != "zombie"] == []


def test_bad_input_is_one_line(tmp_path):
    proc = _cli("run", "quik", "--results", str(tmp_path / "x.sqlite"), check=False)
    assert proc.returncode == 2
    assert "did you mean 'quick'" in proc.stderr and "Traceback" not in proc.stderr
    proc = _cli("run", "quick", "--servers", "nginx-baselin", check=False)
    assert proc.returncode == 2 and "nginx-baseline" in proc.stderr
    proc = _cli("show", str(tmp_path / "absent.sqlite"), check=False)
    assert proc.returncode == 3 and "no results store" in proc.stderr


def test_a_log_gets_one_line_per_cell_and_the_run_leaves_its_report(small_study):
    """Output to a file (not a terminal): one line per cell with its figures, and the report."""
    results, stdout, _ = small_study
    lines = [line for line in stdout.splitlines() if line.startswith("[")]
    assert [line.split("]")[0] + "]" for line in lines] == [f"[{i}/6]" for i in range(1, 7)]
    assert all(" req/s (repeats " in line and " left" in line for line in lines), lines
    report = results.with_name("results-report") / "report.html"
    assert report.exists() and f"report: {report}" in stdout
