"""A stored capacity load read back: per server, the capacity the stored steps say (the search's
own rule, results/capacity_step.py), in requests per second, with its interval, where errors start,
and the server's CPU per request and memory across the share of capacity (the cost cells)."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, replace
from typing import Any

from wsgibench.results.capacity import (
    COST_NOTE,
    RERUN_NOTE,
    Budget,
    CapacityResult,
    Step,
    StepStatus,
    capacity_of,
)
from wsgibench.results.capacity_step import step_of
from wsgibench.results.repeat import StoredRepeat
from wsgibench.results.store import Cell, Store
from wsgibench.results.verdict import CellStatus


@dataclass(frozen=True)
class CostPoint:
    share: float  # of the capacity
    cpu_us_per_request: float | None
    rss_mib: float | None


@dataclass(frozen=True)
class ServerCapacity:
    load: str
    server: str
    budget: Budget
    calls: int  # requests per connection: the rates are connections/s, × calls requests/s
    result: CapacityResult
    costs: tuple[CostPoint, ...]
    workers: int | None
    # A replay's: the rates are speeds, × its log's mean requests/s
    unit_rps: float | None = None

    @property
    def replay(self) -> bool:
        return self.unit_rps is not None

    def requests(self, rate: float | None) -> float | None:
        if rate is None:
            return None
        return rate * self.unit_rps if self.unit_rps is not None else rate * self.calls

    def cost_at(self, share: float) -> CostPoint | None:
        near = [c for c in self.costs if abs(c.share - share) <= 0.1]
        return min(near, key=lambda c: abs(c.share - share)) if near else None


def capacity_loads(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The study's capacity loads (and replays with a budget: a search of the speed), by name,
    as its file wrote them."""
    return {
        str(load.get("name") or load.get("model")): load
        for load in config.get("load", [])
        if isinstance(load, dict)
        and (
            load.get("model") == "capacity"
            or (load.get("model") == "replay" and "slo_p99_ms" in load)
        )
    }


def read_capacities(store: Store, study_id: int) -> list[ServerCapacity]:
    study = store.study(study_id)
    config = json.loads(study["config_json"])
    loads = capacity_loads(config)
    threshold = float(config.get("error_threshold", 0.05))
    by_key: dict[tuple[str, str], list[Cell]] = {}
    for cell in store.cells(study_id):
        if cell.load in loads:
            by_key.setdefault((cell.load, cell.server), []).append(cell)
    out = []
    for (load, server), cells in sorted(by_key.items()):
        raw = loads[load]
        budget = Budget(
            float(raw["slo_p99_ms"]),
            float(raw["slo_p50_ms"]) if "slo_p50_ms" in raw else None,
            float(raw.get("max_error_rate", threshold)),
            bool(raw.get("slo_per_kind", False)),
        )
        out.append(_server(store, load, server, raw, budget, cells))
    return out


def _first_run(cell: Cell) -> list[Step]:
    """The step a rerun's cell took the place of, as its note says (RERUN_NOTE), or none."""
    said = next((n for n in cell.notes if n.startswith(RERUN_NOTE)), None)
    if said is None:
        return []
    reason = said[len(RERUN_NOTE) :].strip().removeprefix("(").removesuffix(")")
    return [Step(cell.level, StepStatus.INVALID, reason, harness=True, machine=True)]


def _server(
    store: Store, load: str, server: str, raw: dict[str, Any], budget: Budget, cells: list[Cell]
) -> ServerCapacity:
    steps = []
    calls = int(raw.get("calls", 1))
    unit = None
    for cell in sorted(cells, key=lambda c: c.position):
        if COST_NOTE in cell.notes:
            continue
        reps = store.stored_repeats(cell.id)
        if raw.get("model") == "replay" and unit is None:
            unit = replay_rate(reps)
        steps += _first_run(cell)
        step = step_of(cell.level, cell.status, cell.reason, reps, budget, calls, unit)
        steps.append(replace(step, cell_id=cell.id))
    result = capacity_of(steps, float(raw.get("resolution", 0.05)))
    costs = []
    if result.capacity:
        for cell in cells:
            reps = [r for r in store.stored_repeats(cell.id) if r.rps_ok and r.cpu_mean_pct]
            if cell.status != CellStatus.MEASURED or not reps or cell.level > result.capacity:
                continue
            cpu = statistics.median(r.cpu_mean_pct / 100 * 1e6 / r.rps_ok for r in reps)  # type: ignore[operator]
            rss = [r.rss_peak_bytes / 2**20 for r in reps if r.rss_peak_bytes]
            costs.append(CostPoint(cell.level / result.capacity, cpu, max(rss) if rss else None))
    workers = (cells[0].isolation or {}).get("workers") if cells else None
    return ServerCapacity(
        load,
        server,
        budget,
        int(raw.get("calls", 1)),
        result,
        tuple(sorted(costs, key=lambda c: c.share)),
        workers,
        unit,
    )


def replay_rate(repeats: list[StoredRepeat]) -> float | None:
    """A replay's requests a second at speed 1, from a stored repeat's plan: its schedule's
    requests over the log's span."""
    for r in repeats:
        m = r.engine.plan.model
        if m.kind == "trace" and m.schedule_requests and m.span_s:
            return m.schedule_requests / m.span_s
    return None
