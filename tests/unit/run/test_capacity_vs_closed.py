"""A capacity never exceeds the same server's closed-loop peak by more than the noise: one made-up
server (a queue that serves SERVICE requests/s, each repeat's rate off by up to NOISE) measured in
one run by a closed load swept over connections and by a capacity search, both through the
runner's real judging (`measure`), with one request per connection and with ten (the capacity is
in connections/s there, so its requests/s are the rate × calls: the units must not inflate it)."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from wsgibench.databases import LoadDatabase
from wsgibench.machine.topology import build, layout
from wsgibench.results.engine_plan import EnginePlan
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.repeat import Repeat
from wsgibench.results.verdict import CellStatus
from wsgibench.run.capacity import Measured, NoteOf, search_server
from wsgibench.run.cell import CellContext, measure
from wsgibench.study.model import parse_study
from wsgibench.study.plan import CellPlan

from .fakes import FakeServer, result
from .test_judging import GOOD, PLACED, idle_cpus

SERVICE = 3000.0  # requests/s the made-up server can serve
BASE_US = 1000  # its latency when idle
NOISE = 0.05  # each repeat sees the server's rate off by up to this share


@dataclass
class QueueEngine:
    """The engine in front of a server that serves SERVICE requests/s: a closed loop of N
    connections gets min(N / base latency, SERVICE) replies/s; an open loop offered less than
    SERVICE gets every request at the base latency, offered more it falls behind (SERVICE
    replies/s, the queue's wait in its latency)."""

    seed: int
    plans: list[EnginePlan] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def run(self, plan: EnginePlan) -> EngineResult:
        self.plans.append(plan)
        model, seconds = plan.model, float(plan.model.duration_s or 1.0)
        service = SERVICE * (1 + self.rng.uniform(-NOISE, NOISE))
        if model.kind == "closed":
            level = int(model.level)
            rps = min(level / (BASE_US / 1e6), service)
            latency = int(level / rps * 1e6)
            return result(ok=int(rps * seconds), elapsed_s=seconds, p50_us=latency,
                          p99_us=int(latency * 1.5), connections=level)  # fmt: skip
        offered = float(model.level) * (model.calls or 1)
        if offered < service:
            return result(ok=int(offered * seconds), elapsed_s=seconds, p50_us=BASE_US,
                          p99_us=2 * BASE_US)  # fmt: skip
        waited = int((offered / service - 1) * seconds * 1e6)  # the queue by the end
        return result(ok=int(service * seconds), elapsed_s=seconds, p50_us=BASE_US + waited // 2,
                      p99_us=BASE_US + waited)  # fmt: skip


def _study(calls: int):
    return parse_study(
        {
            "servers": ["nginx-baseline"],
            "repeats": 3,
            "load": [
                {
                    "name": "closed",
                    "model": "closed",
                    "levels": [1, 4, 16, 64],
                    "duration_s": 1,
                    "warmup_s": 0,
                },
                {
                    "name": "p99",
                    "model": "capacity",
                    "slo_p99_ms": 10,
                    "duration_s": 1,
                    "warmup_s": 0,
                    "start_rate": 100 / calls,
                    "calls": calls,
                },
            ],  # fmt: skip
        },
        "capacity-vs-closed",
    )


@pytest.mark.parametrize("calls", [1, 10])
@pytest.mark.parametrize("seed", range(5))
def test_the_capacity_is_no_more_than_the_closed_peak_plus_noise(tmp_path: Path, calls, seed):
    study = _study(calls)
    engine = QueueEngine(seed)
    topo = build([0, 1], [(0,), (1,)], [(0, 1)])
    ctx = CellContext(
        study, engine, LoadDatabase(tmp_path), layout(topo), topo, cpu_times=idle_cpus
    )
    closed, capacity_load = study.loads
    peak = 0.0
    for position, level in enumerate(closed.levels):
        outcome = measure(CellPlan(position, "nginx-baseline", closed, level), FakeServer(), GOOD,
                          ctx, PLACED)  # fmt: skip
        assert outcome.status == CellStatus.MEASURED, outcome.reason
        peak = max(peak, statistics.median(r.engine.totals.rps_ok for r in outcome.repeats))

    def run(cell: CellPlan, note_of: NoteOf) -> Measured:
        outcome = measure(cell, FakeServer(), GOOD, ctx, PLACED)
        reps: Sequence[Repeat] = outcome.repeats
        note_of(outcome.status, outcome.reason, reps)
        return Measured(outcome.status, outcome.reason, reps, cell_id=cell.position)

    found, _ = search_server(capacity_load, "nginx-baseline", study, run, position=10)
    assert found.invalid is None and found.capacity is not None, found.stopped
    capacity_rps = found.capacity * calls
    # the peak saw the server's rate (within the noise), and the capacity does not exceed it
    assert SERVICE * (1 - NOISE) <= peak <= SERVICE * (1 + NOISE)
    assert capacity_rps <= peak * (1 + 2 * NOISE), (capacity_rps, peak)
    # nor is it far below: the search found the knee within its resolution and the noise
    assert capacity_rps >= SERVICE * (1 - NOISE) * (1 - 0.05) / (1 + NOISE), capacity_rps
