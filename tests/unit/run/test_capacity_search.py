"""The capacity search of run/capacity.py driven on a fake engine through the runner's real judging
(`measure`): a server with a known knee is found within the resolution, an engine-limited step
stops the search as invalid and is never taken for the server's limit, and a disqualified step is
a miss with errors where they start."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from wsgibench.databases import LoadDatabase
from wsgibench.machine.cpustat import CpuTimes
from wsgibench.machine.topology import build, layout
from wsgibench.results.capacity import COST_NOTE, STEP_NOTE, StepStatus
from wsgibench.results.engine_plan import EnginePlan
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.repeat import Repeat
from wsgibench.results.verdict import CellStatus
from wsgibench.run.capacity import Measured, NoteOf, search_server, search_servers
from wsgibench.run.cell import CellContext, measure
from wsgibench.study.model import Study, parse_study
from wsgibench.study.plan import CellPlan

from .fakes import FakeServer, result
from .test_judging import GOOD, PLACED, idle_cpus

SERVER = "nginx-baseline"


@dataclass
class KneeEngine:
    """An engine in front of a made-up server: every offered rate answered, at 2 ms p99 below
    `knee` requests/s and 200 ms from it on; from `saturated_from` on the engine itself says it
    was the bottleneck; from `errors_from` on a fifth of the requests time out."""

    knee: float
    saturated_from: float | None = None
    errors_from: float | None = None
    # from this rate on the engine's schedule lags (worst lag_ms): its only bottleneck reason
    lagging_from: float | None = None
    lag_ms: float = 13.0
    # from this rate on, the second repeat of every step is as slow as past the knee (a hiccup)
    second_slow_from: float | None = None
    # from this rate on the engine waits for its CPU 40 % of the time (starved, as the harness
    # reads it), its schedule kept all the same (worst lag lag_ms)
    starved_from: float | None = None
    # at this rate the first repeat only lags (lag_ms): the machine busy for a moment
    lag_once_at: float | None = None
    plans: list[EnginePlan] = field(default_factory=list)

    def run(self, plan: EnginePlan) -> EngineResult:
        self.plans.append(plan)
        model = plan.model
        rate, seconds = float(model.level), float(model.duration_s or 1.0)
        ok = max(1, int(rate * (model.calls or 1) * seconds))
        nth = sum(float(p.model.level) == rate for p in self.plans)
        hiccup = self.second_slow_from is not None and rate >= self.second_slow_from and nth == 2
        slow = rate >= self.knee or hiccup
        saturated = self.saturated_from is not None and rate >= self.saturated_from
        lagging = self.lagging_from is not None and rate >= self.lagging_from
        lagging = lagging or (rate == self.lag_once_at and nth == 1)
        starved = self.starved_from is not None and rate >= self.starved_from
        errors = {"timeout": ok // 4} if self.errors_from and rate >= self.errors_from else {}
        lag_us = int(self.lag_ms * 1000)
        reasons = ("engine CPU 99 %",) if saturated else ()
        reasons += (f"schedule lag p99 {lag_us // 2} us > 10000 us",) if lagging else ()
        return result(
            ok=ok,
            errors=errors,
            elapsed_s=seconds,
            mean_us=150_000 if slow else 1_200,
            p50_us=150_000 if slow else 1_000,
            p99_us=200_000 if slow else 2_000,
            saturated=saturated or lagging,
            reasons=reasons,
            plan={"model": model.to_dict()},
            lag_max_us=lag_us if lagging or starved else 0,
        ).with_runqueue_wait(0.4 * seconds if starved else None)


def _study(**load: object) -> Study:
    return parse_study(
        {
            "servers": [SERVER],
            "repeats": 2,
            "load": [
                {
                    "name": "p99",
                    "model": "capacity",
                    "slo_p99_ms": 10,
                    "duration_s": 1,
                    "warmup_s": 0,
                    "start_rate": 100,
                    **load,
                }
            ],
        },
        "capacity-search",
    )


@dataclass
class Ran:
    """A cell the fake run measured: its plan, status and the notes the search gave it."""

    cell: CellPlan
    status: CellStatus
    notes: list[str]
    cell_notes: list[str] = field(default_factory=list)  # what measuring noted on the cell
    cell_diagnoses: list[dict] = field(default_factory=list)


def _search(
    tmp_path: Path,
    engine: KneeEngine,
    study: Study | None = None,
    cpus=idle_cpus,
    servers: list[str] | None = None,
) -> Any:
    """search_server on the fake engine; each cell measured by the runner's `measure`."""
    study = study or _study()
    topo = build([0, 1], [(0,), (1,)], [(0, 1)])
    ctx = CellContext(study, engine, LoadDatabase(tmp_path), layout(topo), topo, cpu_times=cpus)
    ran: list[Ran] = []

    def run(cell: CellPlan, note_of: NoteOf) -> Measured:
        outcome = measure(cell, FakeServer(), GOOD, ctx, PLACED)
        reps: Sequence[Repeat] = outcome.repeats
        notes = note_of(outcome.status, outcome.reason, reps)
        ran.append(Ran(cell, outcome.status, notes, list(outcome.notes), outcome.diagnoses))
        return Measured(outcome.status, outcome.reason, reps, cell_id=1000 + cell.position)

    if servers is None:
        found, position = search_server(study.loads[0], SERVER, study, run, position=7)
        return found, position, ran
    both, position = search_servers(study.loads[0], servers, study, run, position=7)
    return both, position, ran


def test_two_servers_searches_take_turns_step_by_step(tmp_path):
    """Two searches of the same knee take turns (A, B, B, A, …): each finds what it finds alone,
    every step at the next position, neither's steps ever all run before the other's."""
    alone, _, _ = _search(tmp_path, KneeEngine(knee=1234))
    both, position, ran = _search(tmp_path, KneeEngine(knee=1234), servers=["a", "b"])
    for found in both:
        assert [s.rate for s in found.steps] == [s.rate for s in alone.steps]
        assert found.capacity == alone.capacity and found.above == alone.above
    assert [r.cell.position for r in ran] == list(range(7, position))
    order = [r.cell.server for r in ran]
    assert order[:6] == ["a", "b", "b", "a", "a", "b"]
    n = len(alone.steps)
    assert sorted(order[: 2 * n]) == ["a"] * n + ["b"] * n  # the steps in turn, then costs
    assert [r.cell.level for r in ran if r.cell.server == "a"] == [
        r.cell.level for r in ran if r.cell.server == "b"
    ]


def test_a_known_knee_is_found_within_the_resolution(tmp_path):
    engine = KneeEngine(knee=1234)
    found, position, ran = _search(tmp_path, engine)
    assert found.capacity is not None and found.above is not None
    assert found.capacity < 1234 <= found.above
    assert (found.above - found.capacity) / found.capacity <= 0.05
    assert found.stopped == "within 5%" and found.invalid is None and found.error_onset is None
    # doubling from 100 until 1600 missed, then bisection
    rates = [s.rate for s in found.steps]
    assert rates[:5] == [100, 200, 400, 800, 1600] and len(rates) <= 16
    assert all((s.status == StepStatus.MET) == (s.rate < 1234) for s in found.steps)
    # the proof is the capacity step's cell; each step is a cell at the next position
    assert found.proof == 1000 + 7 + rates.index(found.capacity)
    steps, costs = ran[: len(rates)], ran[len(rates) :]
    assert [r.cell.level for r in steps] == rates
    assert [r.cell.position for r in ran] == list(range(7, position))
    for r, step in zip(steps, found.steps, strict=True):
        assert r.status == CellStatus.MEASURED  # a miss of the budget is not a failed cell
        (note,) = r.notes
        assert note.startswith(f"{STEP_NOTE} (p99 ≤ 10 ms, errors ≤ 5.0%): {step.status}, ")
    # then CPU cost at 25, 50 and 75 % of the capacity, marked as not steps of the search
    assert [r.cell.level for r in costs] == [
        pytest.approx(found.capacity * share, rel=0.01) for share in (0.25, 0.5, 0.75)
    ]
    assert all(r.notes == [COST_NOTE] for r in costs)
    # every repeat of every cell ran on the engine, at the cell's rate (no warm-up: warmup_s = 0):
    # a met step all 5 of its repeats, a missed one only its first (over the budget), a cost cell
    # the study's 2
    met = sum(s.status == StepStatus.MET for s in found.steps)
    assert len(engine.plans) == 5 * met + (len(steps) - met) + 2 * len(costs)
    assert {float(p.model.level) for p in engine.plans} == {r.cell.level for r in ran}


def test_a_seeded_search_without_cost_cells_runs_only_its_steps(tmp_path):
    # tune's later rounds: start at an earlier round's capacity, its top next, no cost cells
    study = _study(start_rate=1200, second_rate=1440, cost_cells=False)
    found, _, ran = _search(tmp_path, KneeEngine(knee=1234), study)
    rates = [s.rate for s in found.steps]
    assert rates[:2] == [1200, 1440] and len(rates) <= 5
    assert found.capacity is not None and found.capacity < 1234 <= (found.above or 0)
    assert [r.cell.level for r in ran] == rates  # no cell at 25, 50 or 75 % of it
    assert not any(COST_NOTE in r.notes for r in ran)


def test_a_saturated_engine_stops_the_search_as_invalid_and_is_not_the_servers_limit(tmp_path):
    # The server would go to 5,000/s; the engine gives up at 800/s.
    found, position, ran = _search(tmp_path, KneeEngine(knee=5000, saturated_from=800))
    assert [(r.cell.level, r.status) for r in ran] == [
        (100, CellStatus.MEASURED),
        (200, CellStatus.MEASURED),
        (400, CellStatus.MEASURED),
        (800, CellStatus.INVALID),
    ]
    last = found.steps[-1]
    assert (last.rate, last.status) == (800, StepStatus.INVALID)
    assert last.reason == "load generator was the bottleneck: engine CPU 99 %"
    assert ran[-1].notes == [
        f"{STEP_NOTE} (p99 ≤ 10 ms, errors ≤ 5.0%): invalid, "
        "load generator was the bottleneck: engine CPU 99 %"
    ]
    # the engine's limit is no miss of the server: no rate above the capacity is claimed
    assert found.capacity == 400 and found.above is None
    assert found.stopped == "invalid at 800/s: load generator was the bottleneck: engine CPU 99 %"
    assert found.invalid == last.reason
    assert position == 7 + 4  # and no cost cells on an invalid search


def test_a_disqualified_step_is_a_miss_with_errors(tmp_path):
    # Fast replies all along, but a fifth of the requests time out from 800/s on.
    found, _, ran = _search(tmp_path, KneeEngine(knee=1e9, errors_from=800))
    by_rate = {s.rate: s for s in found.steps}
    bad = by_rate[800]
    assert bad.status == StepStatus.MISSED and bad.errors
    assert bad.reason == "disqualified: error rate 20.0% > 5% (timeout 200)"
    assert next(r for r in ran if r.cell.level == 800).status == CellStatus.DISQUALIFIED
    # the miss bounds the capacity from above, and errors start there
    assert (found.capacity, found.above, found.error_onset) == (775, 800, 800)
    assert [s.rate for s in found.steps] == [100, 200, 400, 800, 600, 700, 750, 775]
    assert found.invalid is None and found.stopped == "within 5%"


def test_a_miss_far_beyond_the_engines_lag_is_the_servers(tmp_path):
    # Past the knee the engine lags too (13 ms at worst, a starved VM): those cells are invalid,
    # but their p99 (200 ms) is over the 10 ms budget by far more than twice the lag, so the miss
    # is the server's and the search goes on to the knee.
    found, _, ran = _search(tmp_path, KneeEngine(knee=1234, lagging_from=1234))
    assert found.invalid is None and found.stopped == "within 5%", found.stopped
    assert found.capacity is not None and found.above is not None
    assert found.capacity < 1234 <= found.above
    lagged = [s for s in found.steps if s.rate >= 1234]
    assert lagged and all(s.status == StepStatus.MISSED for s in lagged)
    assert all("the server's miss" in s.reason for s in lagged)
    cells = {r.cell.level: r.status for r in ran}
    assert all(cells[s.rate] == CellStatus.INVALID for s in lagged)  # the cell says it lagged


def test_a_lagging_step_that_met_or_missed_by_little_stays_invalid(tmp_path):
    # Below the knee (met, 2 ms) and past it with a lag as large as the miss (100 ms worst lag
    # against a 200 ms p99 and a 10 ms budget): the engine could explain it; invalid, search over.
    found, _, _ = _search(tmp_path, KneeEngine(knee=1234, lagging_from=400))
    assert (found.capacity, found.steps[-1].rate) == (200, 400)
    assert found.steps[-1].status == StepStatus.INVALID and found.lower_bound
    found, _, _ = _search(tmp_path, KneeEngine(knee=1234, lagging_from=1600, lag_ms=100))
    assert found.steps[-1].rate == 1600 and found.steps[-1].status == StepStatus.INVALID
    # and an engine out of CPU is never bounded this way, however far past the budget
    found, _, _ = _search(tmp_path, KneeEngine(knee=1234, saturated_from=1600))
    assert found.steps[-1].status == StepStatus.INVALID and found.capacity == 800


def test_a_starved_engine_that_kept_its_schedule_leaves_the_step_to_the_servers_verdict(tmp_path):
    # From 400/s on the engine waits for its CPU 40 % of the time (the harness's verdict: the
    # cell is invalid, starved) but keeps its schedule, 2 ms late at worst: a step met so is met
    # (lateness only adds latency), and past the knee the 200 ms p99 misses the 10 ms budget by
    # far more than twice that lag: the server's miss. The search goes on to the knee.
    found, _, ran = _search(tmp_path, KneeEngine(knee=1234, starved_from=400, lag_ms=2.0))
    assert found.invalid is None and found.stopped == "within 5%", found.stopped
    assert found.capacity is not None and found.capacity < 1234 <= (found.above or 0)
    starved = [s for s in found.steps if s.rate >= 400]
    cells = {r.cell.level: r.status for r in ran}
    assert starved and all(cells[s.rate] == CellStatus.INVALID for s in starved)
    late = "the engine waited for its CPU but kept its schedule (worst lag 2 ms)"
    for step in starved:
        if step.status == StepStatus.MET:
            assert step.reason == f"p99 2 ms over 5 repeats; {late}, which only adds latency"
        else:
            assert step.status == StepStatus.MISSED and step.reason.endswith(
                f"beyond what {late} explains"
            )
    # a lag as large as the miss could explain it: invalid, a lower bound
    found, _, _ = _search(tmp_path, KneeEngine(knee=1234, starved_from=400, lag_ms=150.0))
    assert found.steps[-1].status == StepStatus.INVALID and found.lower_bound
    assert found.steps[-1].rate >= 1234


def test_a_step_stops_once_its_verdict_is_known_and_one_slow_repeat_fails_it(tmp_path):
    # The knee is at 1,234/s, but from 1,000/s on every step's second repeat is slow, all of its
    # requests over the budget: with it a quarter of the step's 4 repeats' requests are, however
    # fast the other two, so its verdict is known and no third is run; the capacity found is
    # below 1,000, not below the knee.
    engine = KneeEngine(knee=1234, second_slow_from=1000)
    found, _, ran = _search(tmp_path, engine, _study(step_repeats=4))
    assert found.capacity is not None and found.above is not None
    assert found.capacity < 1000 <= found.above, [(s.rate, s.status) for s in found.steps]
    runs = {
        r.cell.level: sum(float(p.model.level) == r.cell.level for p in engine.plans) for r in ran
    }
    for step, cell in zip(found.steps, ran, strict=False):
        if step.status == StepStatus.MET:
            assert runs[step.rate] == 4 and step.reason == "p99 2 ms over 4 repeats"
        elif step.rate >= 1234:  # past the knee: the first repeat misses
            assert runs[step.rate] == 1
            assert step.reason == "p99 200 ms > 10 ms (100.0% of the requests over 10 ms)"
        else:  # the hiccup: two repeats, the second over
            assert runs[step.rate] == 2
            over = "p99 150 ms > 10 ms over 2 repeats (50.0% of the requests over 10 ms)"
            assert step.reason == over
            known = f"stopped after repeat 2 of 4: {over}: a miss whatever the 2 repeats left give"
            assert known in cell.cell_notes
        assert cell.cell.repeats == 4
    # the cost cells after the search run the study's repeats (2), with no stop rule
    costs = ran[len(found.steps) :]
    assert costs and all(c.cell.repeats is None and c.cell.stop_at is None for c in costs)
    assert all(runs[c.cell.level] == 2 for c in costs)


def test_a_step_runs_at_least_the_studys_repeats(tmp_path):
    study = parse_study({**_study().raw, "repeats": 6}, "capacity-search")
    found, _, ran = _search(tmp_path, KneeEngine(knee=1234), study)
    assert {r.cell.repeats for r in ran[: len(found.steps)]} == {6}


def test_a_step_the_hypervisor_took_the_servers_cpu_from_is_no_verdict_of_the_servers(
    tmp_path,
):
    # The hypervisor takes 0.1 s of the server's CPU 0 in every 1 s repeat (10 % steal, read from
    # the CPU times as /proc/stat gives them), which is busy the other 0.85 s: every step is
    # contended, a status, never a verdict on the server. The first step is run again once after
    # the calm wait, is contended again, and the search ends there, invalid, with no capacity.
    calls = [0]

    def stolen_cpus() -> CpuTimes:
        calls[0] += 1  # read before and after each repeat: 0.1 s stolen in between
        return CpuTimes({0: 0.85 * calls[0], 1: 0.0}, {0: 0.1 * calls[0], 1: 0.0})

    found, _, ran = _search(tmp_path, KneeEngine(knee=1234), cpus=stolen_cpus)
    assert [(s.rate, s.status) for s in found.steps] == [
        (100, StepStatus.INVALID),
        (100, StepStatus.INVALID),
    ]
    assert all(s.machine for s in found.steps)
    assert found.steps[-1].reason.startswith("contended: other work on the CPUs in repeat 1: ")
    assert "stolen 10 %" in found.steps[-1].reason
    assert found.capacity is None and found.above is None
    assert found.stopped.startswith("invalid at 100/s: contended")
    assert found.rerun == (0,)  # run once more after the calm wait, and stolen from again
    assert all(r.status == CellStatus.CONTENDED for r in ran)


def test_a_step_the_machine_limited_once_is_run_again_and_the_search_goes_on(tmp_path):
    # At 800/s the first repeat's schedule lags 13 ms (the engine late, not busy: the machine's
    # other work for a moment): that step is invalid, run again at once, and the search goes on
    # to the knee on the rerun's verdict. The first cell stays stored, set aside and said.
    found, _, ran = _search(tmp_path, KneeEngine(knee=1234, lag_once_at=800))
    rates = [s.rate for s in found.steps]
    assert rates[:6] == [100, 200, 400, 800, 800, 1600]
    assert found.steps[3].status == StepStatus.INVALID and found.steps[3].machine
    assert found.steps[4].status == StepStatus.MET
    assert found.rerun == (3,) and found.stopping is None and not found.lower_bound
    assert found.invalid is None and found.stopped == "within 5%"
    assert found.capacity is not None and found.capacity < 1234 <= (found.above or 0)
    assert [r.status for r in ran[3:5]] == [CellStatus.INVALID, CellStatus.MEASURED]
    assert any(COST_NOTE in r.notes for r in ran)  # a search that stands has its cost cells


def test_the_engines_own_limit_is_not_run_again(tmp_path):
    # Out of CPU at 800/s: the same step would meet the same limit; the search ends at once.
    found, _, _ = _search(tmp_path, KneeEngine(knee=5000, saturated_from=800))
    assert [s.rate for s in found.steps] == [100, 200, 400, 800]
    assert not found.steps[-1].machine and found.rerun == () and found.lower_bound
