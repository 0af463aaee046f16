"""The per-load summary table: each server's headline numbers, and winners per metric with ties within noise."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wsgibench.baseline import BASELINE
from wsgibench.report import format as fmt
from wsgibench.report.data import CellData, LoadData
from wsgibench.results.repeat import StoredRepeat
from wsgibench.results.seed_errors import repeat_rates, seeds_text
from wsgibench.results.significance import compare_starts
from wsgibench.results.verdict import CellStatus

# Shown with their numbers: measured, and the cells whose numbers are marked and never crowned
# (worker deaths, contended, invalid: the engine saturated, the value is a lower bound).
COUNTED = (CellStatus.MEASURED, CellStatus.DEATHS, CellStatus.CONTENDED, CellStatus.INVALID)
ALL_METRICS = (
    "throughput",
    "latency_p50",
    "latency_p99",
    "errors",
    "efficiency",
    "cores",
    "memory",
)
# Diagnoses that make a cell's number mean something else than it seems, and the metrics they
# touch: such a number is shown, marked, and never crowned (a latency from which the requests
# still waiting are missing would otherwise win the latency ranking).
DISPUTES = {
    "littles-law": (
        ("latency_p50", "latency_p99"),
        "its latency fails Little's law: requests are missing from it",
    ),
    "engine-saturated": (
        ("throughput", "latency_p50", "latency_p99", "errors", "efficiency"),
        "the load generator was the bottleneck",
    ),
    "contended": (ALL_METRICS, "other work took the CPUs during it"),
    "worker-deaths": (ALL_METRICS, "processes of the server died during it"),
}


@dataclass
class Entry:
    """One headline number of one server: its repeats (per server start), where they come from,
    and how they spread."""

    starts: list[list[float]]
    cell_id: int
    repeat_ids: list[int]
    level: float
    status: str
    disputed: str | None = None  # why this number may not win (see DISPUTES)

    @property
    def samples(self) -> list[float]:
        return [v for start in self.starts for v in start]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def low(self) -> float:
        return min(self.samples)

    @property
    def high(self) -> float:
        return max(self.samples)


@dataclass
class ServerRow:
    server: str
    label: str
    flavour: str
    version: str | None
    capabilities: dict[str, Any] | None
    status: str  # "ok", or why the server is missing from (part of) the sweep
    cell_ids: list[int]
    entries: dict[str, Entry | None] = field(default_factory=dict)
    interface: str = ""  # WSGI, ASGI or native (RSGI): how the server called the app


@dataclass
class Metric:
    key: str
    title: str
    higher_is_better: bool
    text: Callable[[float | None], str]


METRICS = (
    Metric("throughput", "best throughput (req/s)", True, fmt.rps),
    Metric("latency_p50", "p50 latency at reference load (ms)", False, fmt.ms),
    Metric("latency_p99", "p99 latency at reference load (ms)", False, fmt.ms),
    Metric("errors", "error rate at reference load", False, fmt.pct),
    Metric("memory", "peak memory, RSS summed over the process tree (MiB)", False, fmt.mib),
    Metric("efficiency", "requests per CPU-second at reference load", True, fmt.rps),
)
METRIC = {m.key: m for m in METRICS}
# Beside our error rate, the errors the seeds' tools would have counted on the same requests
# (results/seed_errors.py): shown, labelled as that tool's count, never ranked. Key -> tool.
TOOL_KEYS = {"wrk_errors": "wrk", "httperf_errors": "httperf"}
TOOL_METRICS = tuple(
    Metric(
        key,
        f"errors as {tool} would have counted them ({seeds_text(tool)}), at reference load",
        False,
        fmt.pct,
    )
    for key, tool in TOOL_KEYS.items()
)
# Shown beside the requests per CPU-second, never ranked: the cores the server used for them.
CORES = Metric("cores", "cores used at reference load (CPU-s per s)", False, fmt.cores)
# The table's columns: the ranked metrics, with the tools' counts right after our error rate.
_AFTER_ERRORS = [m.key for m in METRICS].index("errors") + 1
COLUMNS = (*METRICS[:_AFTER_ERRORS], *TOOL_METRICS, *METRICS[_AFTER_ERRORS:], CORES)


@dataclass
class Winner:
    metric: Metric
    labels: list[str]  # the best, then any tied with it
    value: str
    method: str
    unranked: list[tuple[str, str]] = field(default_factory=list)  # (label, why) left out
    equal: bool = False  # every tied median is the best's (e.g. no errors anywhere)
    # Why the others were ranked by value only (a side with a single repeat: nothing tested).
    untested: str = ""

    @property
    def tied(self) -> bool:
        return len(self.labels) > 1

    def tie_text(self, noted: str = "") -> str:
        """What the winner rests on: a tie and its test, or a ranking by value alone (why no test
        was made said here, or by the mark `noted` of a note said once under every winner)."""
        if self.untested:
            equal = "equal values; " if self.tied else ""
            return f"{equal}ranked by value" + (noted or f": {self.untested}")
        if not self.tied:
            return ""
        return "tie: equal medians" if self.equal else f"tie within noise ({self.method})"

    def unranked_text(self) -> str:
        return "".join(f"; not ranked: {label} ({why})" for label, why in self.unranked)


def untested_notes(winners: list[Winner]) -> dict[str, str]:
    """Why winners were ranked by value (no test possible), each reason once, with its mark."""
    reasons = sorted({w.untested for w in winners if w.untested})
    return {why: "†" * (i + 1) for i, why in enumerate(reasons)}


@dataclass
class LoadTable:
    load: LoadData
    reference_level: float | None
    rows: list[ServerRow]
    winners: list[Winner]


def _entry(cell: CellData | None, values: list[list[float]], key: str) -> Entry | None:
    if cell is None or not values:
        return None
    return Entry(
        values,
        cell.cell.id,
        cell.repeat_ids,
        cell.cell.level,
        cell.cell.status,
        disputed(cell, key),
    )


def disputed(cell: CellData, key: str) -> str | None:
    """Why this cell's number for a metric may not be read as the server's (see DISPUTES)."""
    codes = {str(d.get("code")) for d in cell.cell.diagnoses or []}
    if cell.cell.status == CellStatus.INVALID:
        codes.add("engine-saturated")
    if cell.cell.status == CellStatus.CONTENDED:
        codes.add("contended")
    if cell.cell.status == CellStatus.DEATHS:
        codes.add("worker-deaths")
    for code in sorted(codes & set(DISPUTES)):
        keys, why = DISPUTES[code]
        if key in keys:
            return why
    return None


def tool_rates(cell: CellData, tool: str) -> list[list[float]]:
    """Each repeat's error rate as `tool` would have counted it (results/seed_errors.py), per
    server start."""

    def rate(r: StoredRepeat) -> float | None:
        found = repeat_rates([r.engine], cell.cell.capabilities, tool)
        return found[0] if found else None

    return cell.by_start(rate)


def reference_level(load: LoadData) -> float | None:
    """The highest level at which every server measured anywhere in this load was measured."""
    by_server: dict[str, set[float]] = {}
    for c in load.cells:
        if c.cell.status in COUNTED and c.repeats:
            by_server.setdefault(c.cell.server, set()).add(c.cell.level)
    if not by_server:
        return None
    common = set.intersection(*by_server.values())
    return max(common) if common else min(load.levels)


def _status(cells: list[CellData]) -> str:
    bad = [c for c in cells if c.cell.status != CellStatus.MEASURED]
    if not bad:
        return "ok"
    first = sorted(bad, key=lambda c: c.cell.level)[0]
    reason = first.cell.reason or ""
    return f"{first.cell.status} at {fmt.level(first.cell.level)}" + (
        f": {reason}" if reason else ""
    )


def server_row(server: str, cells: list[CellData], ref: float | None) -> ServerRow:
    counted = [c for c in cells if c.cell.status in COUNTED and c.repeats]
    any_cell = cells[0]
    caps = next((c.cell.capabilities for c in cells if c.cell.capabilities), None)
    row = ServerRow(
        server,
        any_cell.label,
        any_cell.summary.flavour,
        any_cell.summary.version,
        caps,
        _status(cells),
        [c.cell.id for c in cells],
        interface=any_cell.summary.interface,
    )
    best = max(counted, key=lambda c: c.median("rps_ok") or 0, default=None)
    row.entries["throughput"] = _entry(best, best.starts("rps_ok") if best else [], "throughput")
    at_ref = next((c for c in counted if c.cell.level == ref), None)
    for key, column in (
        ("latency_p50", "latency_p50_us"),
        ("latency_p99", "latency_p99_us"),
        ("errors", "error_rate"),
    ):
        row.entries[key] = _entry(at_ref, at_ref.starts(column) if at_ref else [], key)
    for key, tool in TOOL_KEYS.items():
        row.entries[key] = _entry(at_ref, tool_rates(at_ref, tool) if at_ref else [], "errors")
    for key, per_repeat in (("efficiency", _per_cpu), ("cores", _cores)):
        row.entries[key] = _entry(at_ref, at_ref.by_start(per_repeat) if at_ref else [], key)
    with_rss = [c for c in cells if c.values("rss_peak_bytes")]
    fattest = max(with_rss, key=lambda c: max(c.values("rss_peak_bytes")), default=None)
    row.entries["memory"] = _entry(
        fattest, fattest.starts("rss_peak_bytes") if fattest else [], "memory"
    )
    return row


def _per_cpu(r: StoredRepeat) -> float | None:
    return r.per_cpu_s


def _cores(r: StoredRepeat) -> float | None:
    return r.cores_used


def winner(metric: Metric, rows: list[ServerRow]) -> Winner | None:
    """The best median among the WSGI servers (the nginx ceiling competes with none); servers whose
    repeats are not significantly different from the best's are declared tied with it. A disputed
    number (see DISPUTES) competes with none either, and the winner says which were left out."""
    entries = [(r, r.entries.get(metric.key)) for r in rows if r.server != BASELINE]
    unranked = [(r.label, e.disputed) for r, e in entries if e is not None and e.disputed]
    candidates = [(r, e) for r, e in entries if e is not None and not e.disputed]
    if not candidates:
        return None
    sign = -1 if metric.higher_is_better else 1
    candidates.sort(key=lambda re: sign * re[1].median)
    best_row, best = candidates[0]
    labels, method, equal, untested = [best_row.label], "", True, ""
    for r, e in candidates[1:]:
        verdict = compare_starts(best.starts, e.starts)
        if not verdict.testable:  # ranked by value; only an equal value shares the place
            untested = verdict.method
            if e.median == best.median:
                labels.append(r.label)
        elif not verdict.beyond_noise:
            labels.append(r.label)
            method, equal = verdict.method, equal and e.median == best.median
    return Winner(metric, labels, metric.text(best.median), method, unranked, equal, untested)


def load_table(load: LoadData) -> LoadTable:
    ref = reference_level(load)
    by_server: dict[str, list[CellData]] = {}
    for c in load.cells:
        by_server.setdefault(c.cell.server, []).append(c)
    rows = [
        server_row(s, sorted(cells, key=lambda c: c.cell.level), ref)
        for s, cells in by_server.items()
    ]
    # The ceiling first, then the clean numbers best first, then those marked (never the head).
    # A broadcast's rate is the publisher's, the same for all: its servers go by delivery p99.
    fixed = load.role == "broadcast"
    key, sign = ("latency_p99", 1.0) if fixed else ("throughput", -1.0)

    def order(r: ServerRow) -> tuple[bool, bool, float]:
        e = r.entries[key]
        return (
            r.server != BASELINE,
            e is None or e.disputed is not None,
            sign * e.median if e else math.inf,
        )

    rows.sort(key=order)
    ranked = [m for m in METRICS if not (fixed and m.key == "throughput")]
    winners = [w for m in ranked if (w := winner(m, rows)) is not None]
    return LoadTable(load, ref, rows, winners)
