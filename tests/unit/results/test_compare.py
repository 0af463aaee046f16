"""`compare` logic on synthetic stores: no change, a 2x slowdown, refusals across machines and engines;
the false discovery rate over many cells, and the words of each rule."""

from __future__ import annotations

import io
import json
import sqlite3

import pytest
from click.testing import CliRunner
from rich.console import Console

from wsgibench.cli.report import compare_command
from wsgibench.errors import UsageError
from wsgibench.report.compare import markdown, print_table
from wsgibench.results.compare import (
    METRICS,
    CellChange,
    adjust,
    compare_stores,
    median_ratio,
    method_note,
)
from wsgibench.results.significance import Verdict, word
from wsgibench.results.store import Store

from ..synthetic import ENV, build_store


def _open(path):
    return Store(path, create=False)


def test_identical_inputs_no_significant_change(tmp_path):
    a = build_store(tmp_path / "a.sqlite", repeats=5)
    result = compare_stores(_open(a), _open(a))
    assert {c.outcome for c in result.cells} == {"no change detected"}
    assert all(c.verdicts["rps_ok"].p_value == 1.0 for c in result.cells)


def test_rerun_with_noise_only_is_no_change(tmp_path):
    # Other jitter draws (1 % either way): the repeats differ, the servers did not change.
    a = build_store(tmp_path / "a.sqlite", repeats=5, seed=1)
    b = build_store(tmp_path / "b.sqlite", repeats=5, seed=2)
    result = compare_stores(_open(a), _open(b))
    assert {c.outcome for c in result.cells} == {"no change detected"}
    changes = [c.verdicts["rps_ok"] for c in result.cells]
    assert all(v.median_a != v.median_b and abs(v.change) < 0.02 for v in changes)


def test_twofold_slowdown_is_significant(tmp_path):
    a = build_store(tmp_path / "a.sqlite", repeats=5, seed=1)
    b = build_store(tmp_path / "b.sqlite", repeats=5, seed=2, slowdown=2.0)
    result = compare_stores(_open(a), _open(b))
    for c in result.cells:
        v = c.verdicts["rps_ok"]
        assert v.significant and v.p_value < 0.01 and v.change == pytest.approx(-0.5, abs=0.03)
        assert c.outcome.startswith("regressed (throughput")
    assert median_ratio(result) == pytest.approx(0.5, abs=0.02)
    text = markdown(result)
    assert "| gunicorn-gthread | closed | 4 |" in text and "regressed" in text
    out = io.StringIO()
    print_table(result, Console(file=out, width=220))
    assert "regressed" in out.getvalue() and "summary: 6 regressed" in out.getvalue()


def test_different_machine_refused_in_one_line_and_forced(tmp_path):
    a = build_store(tmp_path / "a.sqlite")
    b = build_store(tmp_path / "b.sqlite", env={**ENV, "cpu_model": "Other CPU", "cpu_count": 64})
    with pytest.raises(UsageError) as info:
        compare_stores(_open(a), _open(b))
    message = str(info.value)
    assert "\n" not in message and "cpu_model 'Test CPU 3000' vs 'Other CPU'" in message
    assert "cpu_count 2 vs 64" in message and "--force" in message
    forced = compare_stores(_open(a), _open(b), force=True)
    assert len(forced.differences) == 2 and len(forced.cells) == 6


def test_different_engine_refused(tmp_path):
    a = build_store(tmp_path / "a.sqlite")
    b = build_store(tmp_path / "b.sqlite", env={**ENV, "engine": {"engine_version": "0.2.0"}})
    with pytest.raises(UsageError, match="engine_version '0.1.0' vs '0.2.0'"):
        compare_stores(_open(a), _open(b))


def test_cells_present_on_one_side_or_unmeasured(tmp_path):
    a = build_store(tmp_path / "a.sqlite", levels=(4, 16))
    b = build_store(tmp_path / "b.sqlite", levels=(4, 64), disqualify=("waitress", 4))
    outcomes = {(c.server, c.level): c.outcome for c in compare_stores(_open(a), _open(b)).cells}
    assert outcomes[("waitress", 16)] == "only in A" and outcomes[("waitress", 64)] == "only in B"
    # Same seed, same draws at level 4: unchanged; the disqualified side is named on the verdict.
    assert outcomes[("gunicorn-gthread", 4)] == "no change detected"
    assert outcomes[("waitress", 4)].endswith("[B disqualified]"), outcomes[("waitress", 4)]


def test_compare_command_exit_codes_and_markdown(tmp_path):
    a = build_store(tmp_path / "a.sqlite", repeats=5)
    b = build_store(tmp_path / "b.sqlite", repeats=5, env={**ENV, "kernel": "6.9.9"})
    runner = CliRunner()
    refused = runner.invoke(compare_command, [str(a), str(b)])
    assert refused.exit_code == 2
    assert "kernel '6.1.0-test' vs '6.9.9'" in refused.output
    md = tmp_path / "cmp.md"
    ok = runner.invoke(compare_command, [str(a), str(b), "--force", "--markdown", str(md)])
    assert ok.exit_code == 0, ok.output
    assert "forced" in md.read_text() and "| nginx-baseline | closed |" in md.read_text()
    same = runner.invoke(compare_command, [str(a), str(a), "--study-a", "1", "--study-b", "1"])
    assert same.exit_code == 0 and "no change detected" in same.output


def test_terminal_table_matched_cells_only_within_120_columns(tmp_path):
    a = build_store(tmp_path / "a.sqlite", levels=(4, 16), repeats=5)
    b = build_store(tmp_path / "b.sqlite", levels=(4, 64), repeats=5, seed=2, slowdown=2.0)
    result = compare_stores(_open(a), _open(b))
    out = io.StringIO()
    print_table(result, Console(file=out, width=240))
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "closed · 4" in text and "closed · 16" not in text and "closed · 64" not in text
    assert "waitress: only in A (closed 16)" in text and "waitress: only in B (closed 64)" in text
    assert not any(line.strip().startswith("│") and "only in" in line for line in text.splitlines())


def _diagnose(path, server: str, level: int, code: str) -> None:
    """Give a stored cell a diagnosis, as judging would have stored it."""
    db = sqlite3.connect(path)
    with db:
        said = json.dumps([{"code": code, "message": f"{code} here", "invalid": False}])
        db.execute(
            "UPDATE cells SET diagnoses_json=? WHERE server=? AND level=?", (said, server, level)
        )
    db.close()


def test_a_verdict_says_when_it_rests_on_a_flagged_cell(tmp_path):
    a = build_store(tmp_path / "a.sqlite", repeats=5)
    b = build_store(tmp_path / "b.sqlite", repeats=5, seed=2, slowdown=2.0)
    # The stores' own cells carry the diagnoses (read back by compare, not set on its result):
    # B's waitress at 16 disputed by Little's law, A's at 4 with many re-sends; a diagnosis
    # that does not change what a number means flags nothing.
    _diagnose(b, "waitress", 16, "littles-law")
    _diagnose(a, "waitress", 4, "many-resends")
    _diagnose(b, "gunicorn-gthread", 4, "listen_overflow")
    by = {(c.server, c.level): c for c in compare_stores(_open(a), _open(b)).cells}
    disputed = by[("waitress", 16)]
    assert disputed.outcome.startswith("regressed"), disputed.outcome
    assert disputed.outcome.endswith("[B littles-law]"), disputed.outcome
    assert by[("waitress", 4)].outcome.endswith("[A many-resends]"), by[("waitress", 4)].outcome
    assert "[" not in by[("gunicorn-gthread", 4)].outcome
    assert "[" not in by[("nginx-baseline", 16)].outcome


def test_runs_that_served_different_apps_say_so_above_their_changes(tmp_path):
    a = build_store(tmp_path / "a.sqlite", repeats=5, seed=1)
    mine = {"app": "mine:app", "requests": [{"name": "i", "path": "/api/items"}]}
    b = build_store(tmp_path / "b.sqlite", repeats=5, seed=2, slowdown=2.0, config=mine)
    result = compare_stores(_open(a), _open(b))
    assert result.served == [
        "app 'pong' → 'mine:app'",
        "requests the app's own → GET /api/items",
    ]
    out = io.StringIO()
    print_table(result, Console(file=out, width=220))
    assert "served different things" in out.getvalue() and "'mine:app'" in out.getvalue()
    assert "served different things" in markdown(result)
    assert compare_stores(_open(a), _open(a)).served == []
    other = build_store(tmp_path / "o.sqlite", repeats=5, name="goldberg2016")
    assert compare_stores(_open(a), _open(other)).served == ["study 'synthetic' → 'goldberg2016'"]


def test_one_store_compares_its_latest_run_with_the_one_before(tmp_path, monkeypatch):
    # Every run goes to the default store: `compare` alone is "what changed since last time",
    # never the latest run against itself.
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "results" / "wsgibench.sqlite"
    path.parent.mkdir()
    build_store(path)
    said = CliRunner().invoke(compare_command, [])
    assert said.exit_code == 2 and "no run of 'synthetic' before study 1" in said.output
    build_store(path, name="other", seed=3)
    Store(path).begin_study("synthetic", {}, ENV)  # #3, interrupted: passed over while #1 is there
    build_store(path, slowdown=1.25, seed=2)
    for args in ([], [str(path)], [str(path), str(path)]):
        said = CliRunner().invoke(compare_command, args)
        assert said.exit_code == 0, said.output
        words = " ".join(said.output.split())  # the paths are long: wrapped where they fall
        assert 'study #1 "synthetic"' in words and 'study #4 "synthetic"' in words
        assert "summary: 6 regressed" in words
    said = CliRunner().invoke(compare_command, ["--study-a", "4"])
    assert said.exit_code == 2 and "A and B are the same run (study 4" in said.output


def _verdict(p: float | None, change: float = -0.10) -> Verdict:
    tested = p is not None
    return Verdict(
        3, 3, 1000.0, 1000.0 * (1 + change), change, p, "t", bool(p and p < 0.05), tested
    )


def _cell(i: int, p: float | None, change: float = -0.10) -> CellChange:
    cell = CellChange(f"s{i}", "closed", 4.0, "measured", "measured", i, i)
    cell.verdicts = {metric: _verdict(p, change) for metric, _, _ in METRICS}
    return cell


def test_one_small_p_among_many_cells_is_no_discovery():
    """A p of 0.03 is "regressed" alone; among 20 cells of p 0.9 (60 tests), the false discovery
    rate kept at 5 % says no change detected (adjusted p 0.03 × 60 / 3 = 0.6)."""
    alone = [_cell(0, 0.03)]
    adjust(alone)
    assert alone[0].outcome == "mixed: improved p50, p99; regressed throughput"  # all -10 %
    many = [_cell(0, 0.03), *(_cell(i, 0.9) for i in range(1, 20))]
    adjust(many)
    assert many[0].adjusted["rps_ok"] == pytest.approx(0.6)
    assert {c.outcome for c in many} == {"no change detected"}


def test_the_wording_follows_the_rule_not_the_point_estimate():
    small = [_cell(0, 0.001, change=0.01)]  # significant, 1 %: under the noise threshold
    adjust(small)
    assert small[0].outcome == "change within noise"
    big_untested = [_cell(0, None, change=-0.5)]  # half the throughput, but one start a side
    adjust(big_untested)
    assert big_untested[0].outcome.startswith("not tested: throughput -50.0%")
    assert word(_verdict(0.2), 0.2, True) == "no change detected"
    assert word(_verdict(0.001, 0.1), 0.001, True) == "improved"
    assert word(_verdict(0.001, 0.1), 0.001, False) == "regressed"  # p99 up 10 %


def test_a_store_from_before_starts_is_one_start_a_cell_and_untested(tmp_path):
    a = build_store(tmp_path / "a.sqlite", starts=0)
    b = build_store(tmp_path / "b.sqlite", slowdown=2.0, starts=0)
    result = compare_stores(_open(a), _open(b))
    assert {c.outcome.split(":")[0] for c in result.cells} == {"not tested"}
    assert "Server starts per cell: A 1; B 1." in method_note(result)
