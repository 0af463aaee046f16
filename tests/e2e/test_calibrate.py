"""`wsgibench calibrate` through the installed script at its smallest size: bjoern against itself,
2 pairs of 2 repeats over 2 server starts each, the two entries' starts taken in turn (A B B A).
Every pair is judged and said, the calibration is stored for this machine with its nominal
level, each cell's repeats came from 2 starts of the server on different ports, and the report
of a pair cites the calibration only beside a claim the rule allowed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from wsgibench.results.calibration import calibrations
from wsgibench.results.repeat import start_of
from wsgibench.results.store import Store

from .helpers import cli, measured_or_engine_bound, require
from .procs import none_left

pytestmark = pytest.mark.e2e


def test_bjoern_against_itself_at_the_smallest_size(tmp_path: Path, own_tag: str):
    require("bjoern")
    argv = cli(
        "calibrate", "bjoern", "--pairs", "2", "--repeats", "2", "--duration", "0.5",
        "--results", "s.sqlite",
    )  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in said, said[-3000:]
    assert "bjoern pair 1/2: " in said and "bjoern pair 2/2: " in said
    assert "bjoern against itself, 2 pair(s) of closed" in said and "(nominal 5%" in said
    store = Store(tmp_path / "s.sqlite", create=False, read_only=True)
    (found,) = calibrations(store, env := _environment(store))
    assert found.server == "bjoern" and len(found.pairs) == 2 and found.alpha == 0.05
    # a pair is tested when both its cells were measured; bjoern at 50 connections can outrun
    # the engine's one CPU on 2 cores, and then the tool says so and judges nothing
    measured = {
        study_id: all(c.status == "measured" for c in store.cells(study_id))
        for study_id in found.studies
    }
    assert found.tested == sum(measured.values()), (found.pairs, measured)
    assert found.ahead <= found.tested and found.changed <= found.tested
    assert calibrations(store, {**env, "cpu_model": "another CPU"}) == []
    for study_id in found.studies:
        cells = store.cells(study_id)
        assert sorted(c.server for c in cells) == ["bjoern", "bjoern#b"]
        _took_turns(store, cells)
        for cell in cells:
            assert measured_or_engine_bound(cell), (cell.status, cell.reason)
            if cell.status != "measured":
                continue
            reps = store.stored_repeats(cell.id)
            assert [start_of(r) for r in reps] == [0, 1]  # one repeat in each of 2 starts
            ports = {r.engine.plan.target.port for r in reps}
            assert len(ports) == 2  # each start on a port of its own
    report = subprocess.run(
        cli("report", "s.sqlite", "--out", "rep"), capture_output=True, text=True, cwd=tmp_path
    )
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "rep" / "summary.md").read_text()
    if measured[max(found.studies)]:  # the report's study: both its cells ranked
        assert "leads with" in text and "2 vs 2 server starts" in text
    if "ahead of" in text:  # a claim, then with how often identical servers were called apart
        assert "identical servers were called apart in" in text
    assert none_left(own_tag) == []  # of the processes this test started


def _took_turns(store: Store, cells: list) -> None:
    """The two cells' server starts ran in turn, A B then B A, by the engine's own start times of
    their repeats (when both cells ran both their starts)."""
    first, second = sorted(cells, key=lambda c: c.position)
    runs = [(r.engine.started_unix_s, c.server, start_of(r)) for c in cells for r in
            store.stored_repeats(c.id)]  # fmt: skip
    if len(runs) == 4:
        order = [(server, start) for _, server, start in sorted(runs)]
        assert order == [(first.server, 0), (second.server, 0), (second.server, 1),
                         (first.server, 1)], order  # fmt: skip


def _environment(store: Store) -> dict:
    import json

    return json.loads(store.study(1)["environment_json"])
