"""What the servers' CPU bought, in sentences: the ranking by requests per CPU-second beside the one
by req/s (and which to read for a fixed CPU budget), a lead that comes with more cores than the
server's workers suggest, and one server's figures across placements (pinned, shared, quota)."""

from __future__ import annotations

import statistics
from typing import Any

from wsgibench.baseline import BASELINE
from wsgibench.report import format as fmt
from wsgibench.report.data import CellData, LoadData, ReportData
from wsgibench.results.repeat import StoredRepeat
from wsgibench.results.significance import compare_starts
from wsgibench.results.verdict import CellStatus

# Cores beyond the workers' count (x this) that make a lead "bought with more CPU".
MORE_CORES = 1.15
BUDGET = (
    "For a fixed CPU budget (a container's quota, a VM's cores) read the per-CPU-second "
    "ranking: it counts every core a server used, whatever its worker count says; req/s is what "
    "the server gave with the CPUs it was allowed here."
)


def _med(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _counted(cells: list[CellData]) -> list[CellData]:
    return [
        c
        for c in cells
        if c.cell.server != BASELINE
        and c.cell.status == CellStatus.MEASURED
        and c.values("rps_ok")
        and c.efficiency()
    ]


def _where(load: LoadData, level: float) -> str:
    return f"{load.name}, {load.level_field} {level:g}"


def unit(load: LoadData) -> str:
    """What a load's rate counts: an echo load's echoes, else requests."""
    return "echoes/s" if load.role == "echo" else "req/s"


def _figures(c: CellData, per: str = "req/s") -> str:
    return (
        f"{fmt.rps(c.median('rps_ok'))} {per} on {fmt.cores(_med(c.cores()))} cores, "
        f"{fmt.rps(_med(c.efficiency()))} per CPU-second"
    )


def per_cpu_claim(first: CellData, second: CellData, per: str = "req/s") -> str:
    """Who gives the most requests per CPU-second, against the runner-up by the rule of every
    claim between servers (results/significance.py, on the server starts): ahead, tied within
    noise, or above by value when untested."""
    verdict = compare_starts(first.by_start(_per_cpu), second.by_start(_per_cpu))
    figures, other = _figures(first, per), fmt.rps(_med(second.efficiency()))
    name, runner = first.cell.server, second.cell.server
    if not verdict.testable:
        return f"{name} has the most per CPU-second ({figures}), above {runner} ({other}) by value; {verdict.method}"
    if verdict.beyond_noise:
        return (
            f"{name} leads per CPU-second ({figures}), ahead of {runner} ({other}; p = "
            f"{verdict.p_value:.2g}, {verdict.method})"
        )
    return (
        f"{name} has the most per CPU-second ({figures}), tied within noise with {runner} "
        f"({other}; {verdict.method})"
    )


def _per_cpu(r: StoredRepeat) -> float | None:
    return r.per_cpu_s


def fair_ranking(load: LoadData, level: float) -> str | None:
    """Who leads by req/s and who by requests per CPU-second at one level (medians), the latter
    tested against its runner-up (`per_cpu_claim`)."""
    cells = _counted([c for c in load.cells if c.cell.level == level])
    if len(cells) < 2:
        return None
    by_rps = max(cells, key=lambda c: c.median("rps_ok") or 0.0)
    first, second = sorted(cells, key=lambda c: -(_med(c.efficiency()) or 0.0))[:2]
    head, per = f"{_where(load, level)}, per CPU-second", unit(load)
    claim = per_cpu_claim(first, second, per)
    if by_rps is first:
        return f"{head}: {first.cell.server} leads by {per} and {claim.split(' ', 1)[1]}."
    return (
        f"{head}: {by_rps.cell.server} leads by {per} ({_figures(by_rps, per)}) but {claim}. "
        + BUDGET.replace("req/s", per)
    )


def more_cores(load: LoadData, level: float) -> str | None:
    """The req/s leader at a level, when it used more cores than its workers suggest and more
    than the runner-up: its lead is partly bought with CPU."""
    cells = sorted(
        _counted([c for c in load.cells if c.cell.level == level]),
        key=lambda c: -(c.median("rps_ok") or 0.0),
    )
    if len(cells) < 2:
        return None
    first, second = cells[0], cells[1]
    workers = int((first.cell.isolation or {}).get("workers") or 1)
    used, other = _med(first.cores()) or 0.0, _med(second.cores()) or 0.0
    if used <= workers * MORE_CORES or used <= other * MORE_CORES:
        return None
    threads = first.threads_peak()
    counted = f", {threads} threads" if threads else ""
    return (
        f"{_where(load, level)}: {first.cell.server}'s lead over {second.cell.server} comes with "
        f"{used:.2f} cores used by {workers} worker(s){counted}, against {other:.2f}: more CPU "
        f"than its worker count suggests. Per CPU-second it gives "
        f"{fmt.rps(_med(first.efficiency()))}, {second.cell.server} "
        f"{fmt.rps(_med(second.efficiency()))}."
    )


def _shape(config: dict[str, Any]) -> str:
    """A load's settings but its name and placement: loads equal in shape differ in placement."""
    skip = {"name", "placement", "cpu_quota"}
    return repr(sorted((k, repr(v)) for k, v in config.items() if k not in skip))


def _placement_of(config: dict[str, Any]) -> str:
    where = str(config.get("placement", "pinned"))
    if where == "quota":
        return f"quota {config['cpu_quota']:g} core(s)" if "cpu_quota" in config else "quota"
    return where


def placements(data: ReportData) -> list[str]:
    """Per server and level, its req/s and cores under each placement the study ran it in."""
    found: dict[tuple[str, str, str, float], dict[str, CellData]] = {}
    for load in data.loads:
        if load.is_capacity:
            continue
        for c in load.cells:
            if c.cell.status == CellStatus.MEASURED and c.values("rps_ok"):
                key = (c.cell.server, _shape(load.config), load.level_field, c.cell.level)
                found.setdefault(key, {})[_placement_of(load.config)] = c
    return [
        f"{server} at {field} {level:g} by placement: "
        + "; ".join(f"{where} {_figures(c)}" for where, c in by_placement.items())
        + "."
        for (server, _, field, level), by_placement in found.items()
        if len(by_placement) > 1
    ]
