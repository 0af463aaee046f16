"""History over synthetic stores (8 runs of one study): a 10 % slowdown from one run on is found at
that run in every cell key's timeline and nowhere else, 8 steady runs give no change, a run from
another engine is kept apart and named, and `history --fail-on-regression` exits 1 on a slower
newest run and 0 on a steady one."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from wsgibench.cli.history import history_command
from wsgibench.report import vega
from wsgibench.report.history import history_html
from wsgibench.results.history import read_history

from ..synthetic import ENV, build_store

SPEEDS = {"gunicorn-gthread": 5000.0, "waitress": 3000.0}


def _runs(folder: Path, slow_from: int | None, n: int = 8, env: dict | None = None) -> Path:
    folder.mkdir(exist_ok=True)
    for i in range(n):
        slowdown = 1 / 0.9 if slow_from is not None and i >= slow_from else 1.0
        build_store(
            folder / f"run-{i:02}.sqlite", SPEEDS, seed=i, slowdown=slowdown, env=env or ENV
        )
    return folder


def test_a_slowdown_from_one_run_on_is_found_there_and_nowhere_else(tmp_path: Path):
    (group,) = read_history([_runs(tmp_path / "h", slow_from=4)])
    assert len(group.runs) == 8 and len(group.timelines) == 4  # 2 servers x 2 levels
    for timeline in group.timelines:
        assert len(timeline.points) == 8
        (change,) = timeline.rps_changes
        assert change.index == 4 and change.kind == "step", timeline.key
        assert -0.13 < change.size < -0.07
        (slower,) = timeline.p99_changes  # the p99 rose at the same run
        assert slower.index == 4 and slower.size > 0.07


def test_steady_runs_give_no_change(tmp_path: Path):
    (group,) = read_history([_runs(tmp_path / "h", slow_from=None)])
    assert all(not t.rps_changes and not t.p99_changes for t in group.timelines)


def test_a_run_of_another_engine_is_kept_apart(tmp_path: Path):
    folder = _runs(tmp_path / "h", slow_from=None, n=4)
    other = {**ENV, "engine": {**ENV["engine"], "engine_version": "0.2.0"}}
    build_store(folder / "other.sqlite", SPEEDS, env=other)
    groups = read_history([folder])
    assert sorted(len(g.runs) for g in groups) == [1, 4]
    assert {g.metadata["engine_version"] for g in groups} == {"0.1.0", "0.2.0"}
    said = CliRunner().invoke(history_command, [str(folder)])
    assert said.exit_code == 0 and "2 groups of runs that cannot be compared" in said.output
    assert "engine 0.2.0" in said.output and "engine 0.1.0" in said.output


def test_the_gate_fails_a_slower_newest_run_only(tmp_path: Path):
    slower = _runs(tmp_path / "slower", slow_from=7)
    said = CliRunner().invoke(history_command, [str(slower), "--fail-on-regression", "5%"])
    assert said.exit_code == 1, said.output
    assert said.output.count("REGRESSION") == 4 and "below the stable level" in said.output
    steady = _runs(tmp_path / "steady", slow_from=None)
    said = CliRunner().invoke(history_command, [str(steady), "--fail-on-regression", "5%"])
    assert said.exit_code == 0 and "REGRESSION" not in said.output, said.output
    assert "no change found" in said.output
    # an old slowdown is a finding, not a failure: the newest run is at its new level
    old = _runs(tmp_path / "old", slow_from=3)
    said = CliRunner().invoke(history_command, [str(old), "--fail-on-regression", "5%"])
    assert said.exit_code == 0 and "regression in req/s" in said.output, said.output


def test_bad_input_is_one_line(tmp_path: Path):
    said = CliRunner().invoke(history_command, [str(tmp_path / "nothing")])
    assert said.exit_code == 2 and "no store or folder" in said.output
    folder = _runs(tmp_path / "h", slow_from=None, n=2)
    said = CliRunner().invoke(history_command, [str(folder), "--fail-on-regression", "lots"])
    assert said.exit_code == 2 and "a percentage such as 5%" in said.output


def test_the_html_page_has_one_chart_per_server_with_the_ceiling_dashed(tmp_path: Path):
    folder = tmp_path / "h"
    folder.mkdir()
    speeds = {"nginx-baseline": 20000.0, **SPEEDS}
    for i in range(4):
        build_store(folder / f"run-{i}.sqlite", speeds, seed=i, slowdown=1 / 0.9 if i >= 2 else 1)
    (group,) = read_history([folder])
    page = history_html([group], by_version=False)
    specs = json.loads(page.split('id="specs">')[1].split("</script>")[0])
    assert len(specs) == 2  # gunicorn-gthread and waitress; the ceiling is no chart of its own
    for spec in specs.values():
        layers = spec["layer"]
        dashed = [layer for layer in layers if layer.get("mark", {}).get("strokeDash")]
        assert len(dashed) == 1 and len(dashed[0]["data"]["values"]) == 2 * 4  # 2 levels x 4 runs
        assert "<svg" in vega.svg(spec)  # a valid spec, rendered without a browser
    said = CliRunner().invoke(history_command, [str(folder), "--html", str(tmp_path / "t.html")])
    assert said.exit_code == 0 and (tmp_path / "t.html").read_text().count("class=chart id=") == 2


def test_runs_that_served_another_app_or_study_are_other_timelines(tmp_path: Path):
    # `run quick` four times, then `run quick --app mine:app` four times: two timelines per
    # cell key, and no step where the app changed. A study of another name is a third.
    folder = _runs(tmp_path / "h", slow_from=None, n=4)
    for i in range(4):
        build_store(
            folder / f"mine-{i}.sqlite", {"waitress": 1500.0}, seed=i, config={"app": "mine:app"}
        )
    build_store(folder / "other.sqlite", {"waitress": 3000.0}, name="other")
    (group,) = read_history([folder])
    waitress = sorted(t.key for t in group.timelines if t.server == "waitress")
    assert len(waitress) == 6, waitress  # 2 levels x (pong, mine:app, other study)
    assert all(not t.rps_changes for t in group.timelines), [t.key for t in group.timelines]
    assert any("mine:app" in key for key in waitress) and any("(other)" in k for k in waitress)


def test_without_a_path_the_default_store_where_every_run_goes(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    said = CliRunner().invoke(history_command, [])
    assert said.exit_code == 2 and "no store or folder at" in said.output
    assert "results/wsgibench.sqlite" in said.output
    (tmp_path / "results").mkdir()
    build_store(tmp_path / "results" / "wsgibench.sqlite", SPEEDS, env=ENV)
    said = CliRunner().invoke(history_command, [])
    assert said.exit_code == 0 and "1 run(s)" in said.output, said.output
    named = CliRunner().invoke(history_command, ["--results", "results/wsgibench.sqlite"])
    assert named.exit_code == 0 and "1 run(s)" in named.output, named.output


def test_a_contended_run_is_left_out_of_the_search_and_said(tmp_path: Path):
    """Run 5 of 8 measured while other work took the CPUs (its cells diagnosed contended) and
    much slower: no change is read from it, and each timeline says it was left out."""
    folder = _runs(tmp_path / "h", slow_from=None)
    (folder / "run-05.sqlite").unlink()
    build_store(folder / "run-05.sqlite", SPEEDS, seed=5, slowdown=2.0, env=ENV)
    with sqlite3.connect(folder / "run-05.sqlite") as db:
        db.execute(
            "UPDATE cells SET diagnoses_json = ?",
            (json.dumps([{"code": "contended", "message": "other work took 30 %"}]),),
        )
    (group,) = read_history([folder])
    for timeline in group.timelines:
        assert len(timeline.points) == 8 and len(timeline.measured()) == 7
        assert not timeline.rps_changes and not timeline.p99_changes
        assert timeline.left_out() == "1 contended"
    said = CliRunner().invoke(history_command, [str(folder)])
    assert "left out of the search: 1 contended run(s)" in said.output, said.output


def test_a_study_or_server_that_matches_nothing_names_the_nearest(tmp_path: Path):
    folder = _runs(tmp_path / "h", slow_from=None, n=2)
    said = CliRunner().invoke(history_command, [str(folder), "--server", "waitres"])
    assert said.exit_code == 2 and "no server waitres in" in said.output, said.output
    assert "did you mean waitress?" in said.output
    said = CliRunner().invoke(history_command, [str(folder), "--study", "synthetc"])
    assert said.exit_code == 2 and "no finished run of study synthetc" in said.output
    assert "did you mean synthetic?" in said.output and "no finished run in" not in said.output
    said = CliRunner().invoke(history_command, [str(folder), "--server", "zzz"])
    assert said.exit_code == 2 and "(there: " in said.output and "waitress" in said.output
