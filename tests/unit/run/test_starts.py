"""A cell's repeats spread over server starts: how many starts and repeats each, each repeat marked
with its start and numbered after the repeats of the starts before it (measure() on a fake server
and engine), and the starts' outcomes joined as one cell's (a disqualification stands, the first
invalid reason stays, no further start after a cell ends)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from wsgibench.databases import LoadDatabase
from wsgibench.machine.topology import build, layout
from wsgibench.results.repeat import start_of
from wsgibench.results.verdict import CellStatus
from wsgibench.run.cell import CellContext, measure
from wsgibench.run.outcome import CellOutcome
from wsgibench.study.model import parse_study
from wsgibench.study.plan import plan_cells

from .fakes import FakeServer
from .test_capacity_vs_closed import QueueEngine
from .test_judging import GOOD, PLACED, idle_cpus


def _study(repeats: int = 3, starts: int | None = None):
    raw = {
        "servers": ["nginx-baseline"],
        "repeats": repeats,
        "load": [{"name": "c", "model": "closed", "levels": [4], "duration_s": 1.0}],
    }
    return parse_study(raw | ({"starts": starts} if starts else {}), "t")


def test_the_repeats_are_spread_over_the_starts():
    cell = plan_cells(_study())[0]
    assert cell.start_count(_study()) == 3 and cell.shares(_study()) == [1, 1, 1]
    assert cell.shares(_study(repeats=5, starts=2)) == [3, 2]
    assert cell.shares(_study(repeats=2)) == [1, 1]  # at most one start a repeat
    assert cell.shares(_study(repeats=1)) == [1]
    step = replace(cell, repeats=5, starts=1)  # a capacity step: one start
    assert step.shares(_study()) == [5]


def test_each_repeat_is_marked_with_its_start_and_numbered_on(tmp_path: Path):
    study = _study()
    topo = build([0, 1], [(0,), (1,)], [(0, 1)])
    ctx = CellContext(
        study, QueueEngine(1), LoadDatabase(tmp_path), layout(topo), topo, cpu_times=idle_cpus
    )
    cell = plan_cells(study)[0]
    second = measure(
        replace(cell, start=1, first_repeat=1, share=2), FakeServer(), GOOD, ctx, PLACED
    )
    assert second.status == CellStatus.MEASURED, second.reason
    assert [(r.idx, start_of(r)) for r in second.repeats] == [(1, 1), (2, 1)]
    assert all(r.extra()["start"] == 1 for r in second.repeats)  # what the store keeps


def _measured(n: int, start: int) -> CellOutcome:
    outcome = CellOutcome(isolation={"memory_peak_bytes": 100 * (start + 1)})
    outcome.repeats = [object()] * n  # type: ignore[list-item]
    return outcome


def test_the_starts_outcomes_join_as_one_cell():
    cell = _measured(1, 0)
    assert cell.goes_on(1)
    cell.join(_measured(1, 1), 1)
    assert len(cell.repeats) == 2 and cell.isolation == {"memory_peak_bytes": 200, "starts": 2}
    invalid = CellOutcome(CellStatus.INVALID, "engine saturated")
    cell.join(invalid, 2)
    assert cell.status == CellStatus.INVALID and cell.reason == "start 3: engine saturated"
    assert not cell.goes_on(3)  # the third start ran no repeat: a start short, no more
    cell.join(CellOutcome(CellStatus.INVALID, "another reason"), 3)
    assert cell.reason == "start 3: engine saturated"  # the first invalid reason stays
    cell.join(CellOutcome(CellStatus.DISQUALIFIED, "crashed"), 3)
    assert cell.status == CellStatus.DISQUALIFIED and not cell.goes_on(0)
