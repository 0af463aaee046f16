"""What a study found, in sentences written from its data: the leader at each load and level and by
how much (or a tie within noise), the ceiling margin, per capacity load who has the highest
capacity within the budget and by how much (or that the intervals overlap) with the CPU per request
at capacity, every disqualification with its reason, and every diagnosis that changes what a
number means."""

from __future__ import annotations

import re

from wsgibench.baseline import BASELINE
from wsgibench.report import broadcast, cpu_use, frameworks, protocols
from wsgibench.report import format as fmt
from wsgibench.report.capacity import interval, micros, stopped
from wsgibench.report.data import CellData, LoadData, ReportData
from wsgibench.results.calibration import cited
from wsgibench.results.capacity_compare import CAPACITY_NOISE, overlaps
from wsgibench.results.capacity_read import ServerCapacity
from wsgibench.results.significance import compare_starts
from wsgibench.results.verdict import CellStatus

# Diagnoses worth a finding: they change what a number means (the rest are in the tables).
MEANING = {
    "engine-saturated": "the load generator, not the server, was the bottleneck",
    "contended": "other work took part of the CPUs: their numbers are not ranked",
    "worker-deaths": "processes of the server died during the load: not a clean measurement, "
    "not ranked",
    "many-resends": "the server dropped many requests, which the engine re-sent once each",
    "littles-law": "the latency fails Little's law, requests are missing from it",
    "no-keep-alive": "measured with a new connection per request: the server does no keep-alive",
    "unannounced-close": "the server closes keep-alive connections without saying so "
    "(re-sent, not counted as errors)",
    "listen-overflow": "connections were dropped on a full listen queue",
    "closes-after-n": "the server ends each keep-alive connection after a number of requests: "
    "its reconnections are part of the number",
}


def _ranked(cells: list[CellData]) -> list[CellData]:
    """The servers (not the ceiling) with a counted throughput, best median first."""
    counted = [
        c
        for c in cells
        if c.cell.server != BASELINE and c.cell.status == CellStatus.MEASURED and c.values("rps_ok")
    ]
    return sorted(counted, key=lambda c: -(c.median("rps_ok") or 0.0))


def leader(load: LoadData, level: float, cite: str = "") -> str | None:
    """One sentence on who leads at this level, by how much (ahead only when the test on the
    server starts says so, with how often identical servers were called apart here: `cite`),
    and how close the ceiling is; an echo load's rate is echoes/s."""
    cells = [c for c in load.cells if c.cell.level == level]
    ranked = _ranked(cells)
    if not ranked:
        return None
    first = ranked[0]
    best = first.median("rps_ok") or 0.0
    where = f"{load.name}, {load.level_field} {level:g}"
    text = f"{where}: {first.cell.server} leads with {fmt.rps(best)} {cpu_use.unit(load)}"
    if len(ranked) > 1:
        second = ranked[1]
        verdict = compare_starts(first.starts("rps_ok"), second.starts("rps_ok"))
        other = second.median("rps_ok") or 0.0
        by = f"{best / other - 1:.0%} " if other else ""
        if not verdict.testable:
            text += (
                f", {by}above {second.cell.server} ({fmt.rps(other)}) by value; {verdict.method}"
            )
        elif verdict.beyond_noise:
            text += (
                f", {by}ahead of {second.cell.server} ({fmt.rps(other)}; p = "
                f"{verdict.p_value:.2g}, {verdict.method}; "
                f"{cite or 'no A/A calibration of this machine stored: wsgibench calibrate'})"
            )
        else:
            text += (
                f", tied within noise with {second.cell.server} ({fmt.rps(other)}; "
                f"{verdict.method})"
            )
    ceiling = next((c for c in cells if c.cell.server == BASELINE and c.values("rps_ok")), None)
    if ceiling is not None and ceiling.median("rps_ok"):
        share = best / (ceiling.median("rps_ok") or 1.0)
        text += f"; {share:.0%} of the nginx ceiling ({fmt.rps(ceiling.median('rps_ok'))})"
        if ceiling.cell.status == CellStatus.INVALID:
            text += ", itself limited by the load generator"
        elif ceiling.cell.status == CellStatus.CONTENDED:
            text += ", itself measured while other work took the CPUs"
    elif ceiling is None and any(c.cell.server == BASELINE for c in cells):
        text += "; the nginx ceiling has no number here (see its reason)"
    return text + "."


def findings(data: ReportData) -> list[str]:
    lines: list[str] = []
    cite, capacity_cite = cited(data.calibrations), cited(data.calibrations, capacity=True)
    for load in data.loads:
        if load.is_capacity:  # its steps are no levels: one finding on its capacities
            lines += (
                [text]
                if (text := capacity_leader(load, data.capacities_of(load.name), capacity_cite))
                else []
            )
            continue
        if load.role == "framework":  # its own finding below says more
            continue
        if load.role == "broadcast":  # a fixed rate: judged on delivery latency and loss
            lines += [
                text for level in load.levels if (text := broadcast.finding(load, level, cite))
            ]
            continue
        lines += [text for level in load.levels if (text := leader(load, level, cite))]
        lines += _cpu_lines(load)
    lines += cpu_use.placements(data)
    lines += [section.finding for section in frameworks.sections(data)]
    lines += protocols.findings(data)
    for load in data.loads:
        lines += _disqualified(load)
    lines += _meanings(data)
    old = [c for load in data.loads for c in load.cells if c.summary.replies_only]
    if old:  # a store written before the engine timed failed requests
        lines.append(
            f"{len(old)} cell(s) were stored before failed requests were timed: their latency "
            "covers the complete replies only and leaves timeouts and broken connections out."
        )
    return _said_once(lines)


# Why a claim was not tested (results/significance.py, `no_test`): its reason is said in full once.
_UNTESTED = re.compile(r"(\d+ vs \d+ server starts?: untested) \(a test needs at least \d+ [^)]*\)")


def _said_once(lines: list[str]) -> list[str]:
    """The findings with what a test needs said at its first "untested" only."""
    said: set[str] = set()

    def once(match: re.Match[str]) -> str:
        if match.group(0) in said:
            return match.group(1)
        said.add(match.group(0))
        return match.group(0)

    return [_UNTESTED.sub(once, line) for line in lines]


def _cpu_lines(load: LoadData) -> list[str]:
    """Where the ranking per CPU-second differs from the one by req/s, or the leader used more
    cores than its workers suggest (report/cpu_use.py); the top level's ranking either way."""
    lines = [text for level in load.levels if (text := cpu_use.more_cores(load, level))]
    top = max(load.levels, default=None)
    ranking = cpu_use.fair_ranking(load, top) if top is not None else None
    return lines + ([ranking] if ranking else [])


def _capacity(c: ServerCapacity) -> str:
    r = c.result
    if r.above is None:  # the search stopped before a step missed: a lower bound
        return f"at least {fmt.rps(c.requests(r.capacity))} req/s ({stopped(c)})"
    return f"{fmt.rps(c.requests(r.capacity))} req/s (interval {interval(c)})"


def capacity_leader(load: LoadData, found: list[ServerCapacity], cite: str = "") -> str | None:
    """Who has the highest capacity within the budget, by how much over the next (or that the
    two cannot be told apart: their intervals overlap), and each one's CPU per request at it."""
    if not found:
        return None
    head = f"{load.name} (capacity within {found[0].budget.describe()})"
    ranked = [c for c in found if c.result.capacity]  # best first
    missed = [c.server for c in found if not c.result.capacity]
    if not ranked:
        return f"{head}: no server met the budget at the lowest rate it tried."
    first = ranked[0]
    text = f"{head}: {first.server} has the highest capacity, {_capacity(first)}"
    tied = [c for c in ranked[1:] if overlaps(first, c)]
    if tied:
        named = " and ".join(f"{c.server} with {_capacity(c)}" for c in tied)
        text += (
            f", not distinguishable from {named}: the intervals overlap, each widened by the "
            f"±{CAPACITY_NOISE:.0%} one search of a server lands from another"
        )
    elif len(ranked) > 1:
        second = ranked[1]
        ratio = (first.result.capacity or 0.0) / (second.result.capacity or 1.0)
        text += (
            f", {ratio - 1:.0%} above {second.server} with {_capacity(second)} (apart beyond "
            f"each one's ±{CAPACITY_NOISE:.0%} search noise{'; ' + cite if cite else ''})"
        )
    if missed:
        text += f"; {', '.join(missed)} missed the budget at the lowest rate tried"
    costs = [
        f"{c.server} {micros(full.cpu_us_per_request)} µs"
        for c in ranked
        if (full := c.cost_at(1.0)) is not None and full.cpu_us_per_request is not None
    ]
    return text + (f". CPU per request at capacity: {', '.join(costs)}." if costs else ".")


def _disqualified(load: LoadData) -> list[str]:
    """Each server that left a load: where it left and why (its later levels only repeat it)."""
    first: dict[str, CellData] = {}
    for c in sorted(load.cells, key=lambda c: c.cell.level):
        if c.cell.status == CellStatus.DISQUALIFIED and c.cell.server not in first:
            first[c.cell.server] = c
    return [
        f"{server} was disqualified from {load.name} at {_where(load, c.cell.level)}: "
        f"{c.cell.reason}."
        for server, c in sorted(first.items())
    ]


def _where(load: LoadData, level: float) -> str:
    """A cell's level as its load's tables say it (a capacity load's: offered requests/s)."""
    if load.is_capacity:
        return f"{fmt.rps(level * int(load.config.get('calls', 1)))} req/s"
    return f"{load.level_field} {level:g}"


def _meanings(data: ReportData) -> list[str]:
    """Per diagnosis that changes a number's meaning: which servers at which levels."""
    where: dict[str, dict[str, list[str]]] = {}
    for load in data.loads:
        for c in load.cells:
            for d in c.cell.diagnoses or []:
                code = d.get("code", "")
                if code in MEANING:
                    cells = where.setdefault(code, {}).setdefault(c.cell.server, [])
                    level = _where(load, c.cell.level) if load.is_capacity else f"{c.cell.level:g}"
                    cells.append(f"{load.name} {level}")
    lines = []
    for code, servers in where.items():
        named = "; ".join(f"{s} ({', '.join(levels)})" for s, levels in sorted(servers.items()))
        lines.append(f"{named}: {MEANING[code]}.")
    return lines
