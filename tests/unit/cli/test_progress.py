"""Progress off a terminal: one line per cell with its status and repeats, and the time left by
the plan, corrected by the pace so far."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from wsgibench.cli.progress import CellProgress, line, planned_seconds
from wsgibench.results.capacity import COST_NOTE
from wsgibench.study.model import parse_study
from wsgibench.study.plan import CellPlan, plan_cells


def _study():
    return parse_study(
        {
            "servers": ["bjoern", "waitress"],
            "repeats": 2,
            "load": [
                {"name": "c", "model": "closed", "levels": [4, 16], "duration_s": 5, "warmup_s": 1}
            ],
        },
        "p",
    )


def _outcome(status="measured", reason=None, rps=(1000.0, 1100.0), notes=()):
    return SimpleNamespace(
        status=status,
        reason=reason,
        repeats=[SimpleNamespace(rps_ok=v, latency_p50_us=250.0) for v in rps],
        notes=list(notes),
    )


def test_plain_output_has_one_line_per_cell_with_the_time_left():
    study = _study()
    cells = plan_cells(study)
    out = io.StringIO()
    progress = CellProgress(Console(file=out, width=200), study, cells)
    assert not progress.interactive
    progress.start()
    for cell in cells:
        progress.cell_done(
            cell, _outcome(), seconds=planned_seconds(study, cell) * 2, skipped=False
        )
    progress.stop()
    text = out.getvalue().splitlines()
    assert text[0] == (
        "p: 2 servers, 4 cells, 2 repeats each over 2 server starts; about 1m08s by the plan"
    )
    assert [t.split("]")[0] for t in text[1:]] == ["[1/4", "[2/4", "[3/4", "[4/4"]
    # each cell planned 2 starts x (2 + 1) + 2 x 5.5 = 17 s, took twice that: 3 left x 34 s
    assert text[1].endswith("· ~1m42s left") and text[4].endswith("· ~0s left")
    assert "measured, 1,050 req/s (repeats 1,000 1,100), p50 0.25 ms" in text[1]


def test_a_cell_without_repeats_says_why():
    cell = plan_cells(_study())[0]
    said = line(cell, _outcome("unavailable", "not installed", rps=()))
    assert said.endswith(": unavailable (not installed)") and "connections=4" in said


def test_a_resumed_run_counts_the_cells_it_kept():
    study = _study()
    cells = plan_cells(study)
    out = io.StringIO()
    progress = CellProgress(Console(file=out, width=200), study, cells)
    progress.start()
    progress.kept({cells[0].key, cells[1].key})
    progress.cell_done(cells[2], _outcome(), 12.0, False)
    text = out.getvalue()
    assert "resuming: 2 cells of 4 kept from the unfinished run, 2 cells to run" in text
    assert "[3/4]" in text and "[1/4]" not in text
    assert "2 servers, 4 cells, 2 repeats each" in text


def test_one_of_each_is_said_in_the_singular():
    study = parse_study(
        {"servers": ["bjoern"], "repeats": 1,
         "load": [{"model": "closed", "levels": [4], "duration_s": 1}]},
        "p",
    )  # fmt: skip
    out = io.StringIO()
    CellProgress(Console(file=out, width=200), study, plan_cells(study)).start()
    assert "1 server, 1 cell, 1 repeat each" in out.getvalue()


def test_a_capacity_search_is_planned_with_its_steps_repeats():
    study = parse_study(
        {"servers": ["bjoern"], "repeats": 3,
         "load": [{"name": "p99", "model": "capacity", "slo_p99_ms": 10, "duration_s": 2,
                   "warmup_s": 0.5, "step_repeats": 5}]},
        "cap",
    )  # fmt: skip
    out = io.StringIO()
    progress = CellProgress(Console(file=out, width=200), study, plan_cells(study))
    progress.start()
    # 12 steps estimated, each planned at its 5 repeats: 12 x (2 + 0.5 + 5 x 2.5) = 3m00s
    assert out.getvalue().splitlines()[0] == (
        "cap: 1 server, 0 cells and about 12 capacity steps, 3 repeats each (a step up to 5); "
        "about 3m00s by the plan"
    )


def test_a_capacity_step_says_its_offered_requests_and_met_or_missed():
    study = parse_study(
        {"servers": ["bjoern"],
         "load": [{"name": "p99", "model": "capacity", "slo_p99_ms": 10, "calls": 10,
                   "duration_s": 2}]},
        "cap",
    )  # fmt: skip
    load = study.loads[0]
    step = CellPlan(0, "bjoern", load, 43.8, 5, 1)
    missed = "capacity step (p99 ≤ 10 ms): missed, repeat 1: p99 50 ms > 10 ms"
    said = line(step, _outcome(notes=[missed]))
    assert said.startswith("bjoern · p99 offered 438 req/s: step missed, repeat 1: p99 50 ms")
    assert "rate=" not in said
    cost = line(step, _outcome(notes=[COST_NOTE]))
    assert "offered 438 req/s: CPU cost at a share of the capacity (not a step)" in cost
