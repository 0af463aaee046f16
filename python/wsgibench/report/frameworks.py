"""Per framework (a load that serves a built-in framework app): the servers ranked, the spread
between the best and the worst, each one's share of its own pong ceiling (the same server with
pong, same level), and whether the server choice changes the result by more than the noise."""

from __future__ import annotations

from dataclasses import dataclass

from wsgibench.report import format as fmt
from wsgibench.report.data import CellData, LoadData, ReportData
from wsgibench.results.significance import compare_starts
from wsgibench.results.verdict import CellStatus


@dataclass(frozen=True)
class FrameworkRow:
    server: str
    interface: str
    rps: float  # median valid replies per second
    low: float  # the slowest and fastest repeat
    high: float
    ceiling: float | None  # the same server with pong, same level: its own ceiling
    # Bytes per reply over the mix, head included: the frameworks' bodies differ (JSON spacing,
    # a charset), so the bytes are shown beside the rate, as for servers.
    reply_bytes: float | None = None

    @property
    def share(self) -> float | None:
        """The framework's throughput as a share of the server's pong ceiling."""
        return self.rps / self.ceiling if self.ceiling else None


@dataclass(frozen=True)
class FrameworkSection:
    framework: str
    load: str
    level: float
    level_field: str
    rows: tuple[FrameworkRow, ...]  # best first
    finding: str


def _measured(cells: list[CellData], level: float) -> list[CellData]:
    return [
        c
        for c in cells
        if c.cell.level == level and c.cell.status == CellStatus.MEASURED and c.values("rps_ok")
    ]


def sections(data: ReportData) -> list[FrameworkSection]:
    """One section per framework load and level; empty for a study with none (a capacity load's
    steps are no levels: its own section ranks its servers)."""
    swept = [load for load in data.loads if not load.is_capacity]
    ceilings = [load for load in swept if not load.config.get("app")]
    out = []
    for load in swept:
        framework = load.config.get("app")
        if not framework:
            continue
        for level in load.levels:
            rows = [_row(c, ceilings, level) for c in _measured(load.cells, level)]
            rows.sort(key=lambda r: -r.rps)
            if rows:
                finding = _finding(framework, load, level, rows)
                out.append(
                    FrameworkSection(
                        framework, load.name, level, load.level_field, tuple(rows), finding
                    )
                )
    return out


def _row(c: CellData, ceilings: list[LoadData], level: float) -> FrameworkRow:
    values = c.values("rps_ok")
    pong = [
        p.median("rps_ok")
        for load in ceilings
        for p in _measured(load.cells, level)
        if p.cell.server == c.cell.server
    ]
    app = (c.cell.server_info or {}).get("app") or {}
    replies = sum(r.engine.totals.responses for r in c.repeats)
    received = sum(r.engine.totals.bytes_received for r in c.repeats)
    return FrameworkRow(
        server=c.cell.server,
        interface=str(app.get("interface") or c.summary.interface or ""),
        rps=c.median("rps_ok") or 0.0,
        low=min(values),
        high=max(values),
        ceiling=pong[0] if pong else None,
        reply_bytes=received / replies if replies else None,
    )


def _finding(framework: str, load: LoadData, level: float, rows: list[FrameworkRow]) -> str:
    where = f"{framework} ({load.level_field} {level:g})"
    best = rows[0]
    text = f"{where}: {best.server} leads with {fmt.rps(best.rps)} req/s"
    if best.share is not None:
        text += (
            f", {best.share:.0%} of its own pong ceiling ({fmt.rps(best.ceiling or 0)}): "
            f"{framework} takes {1 - best.share:.0%} of each request's time there"
        )
    if len(rows) == 1:
        return text + "; one server measured, nothing to rank."
    worst = rows[-1]
    cells = {c.cell.server: c for c in _measured(load.cells, level)}
    verdict = compare_starts(
        cells[best.server].starts("rps_ok"), cells[worst.server].starts("rps_ok")
    )
    ratio = best.rps / worst.rps if worst.rps else float("inf")
    spread = f"{ratio:.2f}× the slowest, {worst.server} ({fmt.rps(worst.rps)})"
    if verdict.testable and not verdict.beyond_noise:
        return (
            f"{text}; {spread}, but the server choice changes {framework} by less than the "
            f"noise ({verdict.method})."
        )
    if not verdict.testable:
        return f"{text}; {spread} by value ({verdict.method})."
    return f"{text}; {spread} ({verdict.method})."
