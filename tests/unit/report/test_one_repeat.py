"""A run with one repeat per cell is said to be one: findings, winners and compare rank by value
and say that no test was possible and how many repeats one needs — never "tie", "within noise" or
"no significant change" — and the report's header describes the run as it was run."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from unit.synthetic import build_store
from wsgibench.cli import cli
from wsgibench.report import write_report
from wsgibench.report.data import load_report_data
from wsgibench.report.findings import findings
from wsgibench.report.table import load_table
from wsgibench.results.compare import compare_stores, method_note
from wsgibench.results.store import Store

SPEEDS = {"nginx-baseline": 200000.0, "bjoern": 123480.0, "granian": 58524.0, "waitress": 11000.0}
CHANGES = ["--levels 64", "--duration 2", "--repeats 1"]
TIE = re.compile(r"\btie|within noise|no significant change", re.I)


def _store(tmp: Path, name: str, slowdown: float = 1.0) -> Store:
    path = build_store(
        tmp / f"{name}.sqlite", SPEEDS, levels=(64,), repeats=1, slowdown=slowdown,
        command_line=CHANGES,
    )  # fmt: skip
    return Store(path, create=False, read_only=True)


def test_findings_and_winners_never_claim_a_tie_on_one_repeat(tmp_path: Path):
    data = load_report_data(_store(tmp_path, "a"))
    lines = findings(data)
    lead = next(line for line in lines if "leads with" in line)
    assert "bjoern leads" in lead and "by value" in lead and "untested" in lead, lead
    assert "1 vs 1 server start" in lead and "ahead" not in lead
    winners = [w for load in data.loads for w in load_table(load).winners]
    assert winners
    for w in winners:
        said = w.tie_text()
        assert not TIE.search(said), said
        if w.metric.key == "throughput":
            assert len(w.labels) == 1 and w.labels[0].startswith("bjoern")
            assert "ranked by value" in said
    assert not any(TIE.search(line) for line in lines), lines


def test_the_report_header_says_how_the_study_was_run(tmp_path: Path):
    store = _store(tmp_path, "a")
    files = write_report(store, tmp_path / "report", None, png=False)
    html, md = files.html.read_text(), files.markdown.read_text()
    for text in (html, md):
        assert "Changed on the command line: --levels 64, --duration 2, --repeats 1" in text
        assert "1 repeat per cell" in text and "closed at connections 64, 1 s" in text
        assert not TIE.search(text.split("Winners", 1)[-1].split("Full interactive")[0])
    # green cells: the winner of each metric, and only servers with exactly its value beside it
    assert html.count('class="win"') == sum(
        len(w.labels) for w in load_table(load_report_data(store).loads[0]).winners
    )


def test_compare_of_one_repeat_stores_tests_nothing_and_counts_for_real(tmp_path: Path):
    a, b = _store(tmp_path, "a"), _store(tmp_path, "b", slowdown=1.19)
    result = compare_stores(a, b)
    outcomes = [c.outcome for c in result.cells if c.matched]
    assert outcomes and all(o.startswith("not tested:") for o in outcomes), outcomes
    assert not any(TIE.search(o) for o in outcomes)
    note = method_note(result)
    assert "Server starts per cell: A 1; B 1." in note and "nothing is tested" in note
    assert "over the 0 tests" in note
    out = CliRunner().invoke(cli, ["compare", str(a.path), str(b.path)]).output
    assert "not tested" in out and "no change detected" not in out
