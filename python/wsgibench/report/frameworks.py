"""Per framework (a load the study declares `role = "framework"`): the servers ranked, the spread
between the best and the worst, each one's share of its own ceiling (the same server on the load
declared `role = "ceiling"`, same level) or why it has none, whether the server choice changes the
result by more than the noise, and the servers not ranked, after them, with their reasons."""

from __future__ import annotations

from dataclasses import dataclass

from wsgibench.report import format as fmt
from wsgibench.report.data import CellData, LoadData, ReportData
from wsgibench.results.significance import compare_starts
from wsgibench.results.verdict import CellStatus

# The order of the servers not ranked: those with numbers first, then those without.
_UNRANKED_ORDER: list[CellStatus] = [s for s in CellStatus if s is not CellStatus.MEASURED]


@dataclass(frozen=True)
class FrameworkRow:
    server: str
    interface: str
    rps: float  # median valid replies per second
    low: float  # the slowest and fastest repeat
    high: float
    ceiling: float | None  # the same server on the ceiling load, same level: its own ceiling
    # Bytes per reply over the mix, head included: the frameworks' bodies differ (JSON spacing,
    # a charset), so the bytes are shown beside the rate, as for servers.
    reply_bytes: float | None = None
    no_ceiling: str = ""  # why `ceiling` is None

    @property
    def share(self) -> float | None:
        """The framework's throughput as a share of the server's own ceiling."""
        return self.rps / self.ceiling if self.ceiling else None


@dataclass(frozen=True)
class Unranked:
    """A server of the framework's load whose cell is not a clean measurement: why."""

    server: str
    status: str
    reason: str

    def text(self) -> str:
        return f"{self.server} ({self.status}" + (f": {self.reason})" if self.reason else ")")


@dataclass(frozen=True)
class FrameworkSection:
    framework: str
    load: str
    level: float
    level_field: str
    rows: tuple[FrameworkRow, ...]  # best first
    finding: str
    unranked: tuple[Unranked, ...] = ()  # after the ranked ones, never their head


def _counted(c: CellData) -> bool:
    return c.cell.status == CellStatus.MEASURED and bool(c.values("rps_ok"))


def _at(cells: list[CellData], level: float) -> list[CellData]:
    return [c for c in cells if c.cell.level == level]


def sections(data: ReportData) -> list[FrameworkSection]:
    """One section per framework load and level; empty for a study that declares none (a
    capacity load's steps are no levels: its own section ranks its servers)."""
    swept = [load for load in data.loads if not load.is_capacity]
    ceilings = [load for load in swept if load.role == "ceiling"]
    out = []
    for load in swept:
        if load.role != "framework":
            continue
        framework = str(load.config.get("app") or data.meta.config.get("app") or load.name)
        for level in load.levels:
            cells = _at(load.cells, level)
            rows = sorted((_row(c, ceilings, level) for c in cells if _counted(c)), key=_rank)
            unranked = tuple(
                Unranked(c.cell.server, str(c.cell.status), c.cell.reason or "")
                for c in sorted(
                    (c for c in cells if not _counted(c)),
                    key=lambda c: (_UNRANKED_ORDER.index(c.cell.status), c.cell.server),
                )
            )
            finding = _finding(framework, load, level, rows, unranked)
            out.append(
                FrameworkSection(
                    framework, load.name, level, load.level_field, tuple(rows), finding, unranked
                )
            )
    return out


def _rank(row: FrameworkRow) -> float:
    return -row.rps


def _ceiling(server: str, ceilings: list[LoadData], level: float) -> tuple[float | None, str]:
    """The server's own ceiling at this level, or None and why there is none."""
    if not ceilings:
        return None, 'the study declares no ceiling load (role = "ceiling")'
    named = ", ".join(load.name for load in ceilings)
    mine = [c for load in ceilings for c in load.cells if c.cell.server == server]
    if not mine:
        return None, f"{server} did not run {named}"
    here = _at(mine, level)
    if not here:
        return None, f"{named} ran no level {level:g}"
    clean = [c for c in here if _counted(c)]
    if clean:
        return clean[0].median("rps_ok"), ""
    c = here[0]
    return None, f"its {named} cell is {c.cell.status}" + (
        f": {c.cell.reason}" if c.cell.reason else ""
    )


def _row(c: CellData, ceilings: list[LoadData], level: float) -> FrameworkRow:
    values = c.values("rps_ok")
    ceiling, why = _ceiling(c.cell.server, ceilings, level)
    app = (c.cell.server_info or {}).get("app") or {}
    replies = sum(r.engine.totals.responses for r in c.repeats)
    received = sum(r.engine.totals.bytes_received for r in c.repeats)
    return FrameworkRow(
        server=c.cell.server,
        interface=str(app.get("interface") or c.summary.interface or ""),
        rps=c.median("rps_ok") or 0.0,
        low=min(values),
        high=max(values),
        ceiling=ceiling,
        reply_bytes=received / replies if replies else None,
        no_ceiling=why,
    )


def _left_out(unranked: tuple[Unranked, ...]) -> str:
    """The servers not ranked, those with the same status and reason named together (the reason
    said once)."""
    same: dict[tuple[str, str], list[str]] = {}
    for u in unranked:
        same.setdefault((u.status, u.reason), []).append(u.server)
    said = [
        Unranked(", ".join(servers), status, reason).text()
        for (status, reason), servers in same.items()
    ]
    return "; not ranked: " + ", ".join(said) if said else ""


def _finding(
    framework: str,
    load: LoadData,
    level: float,
    rows: list[FrameworkRow],
    unranked: tuple[Unranked, ...],
) -> str:
    where = f"{framework} ({load.level_field} {level:g})"
    if not rows:
        return f"{where}: no server has a clean measurement, nothing to rank{_left_out(unranked)}."
    best = rows[0]
    text = f"{where}: {best.server} leads with {fmt.rps(best.rps)} req/s"
    if best.share is not None:
        text += (
            f", {best.share:.0%} of its own ceiling ({fmt.rps(best.ceiling or 0)}): "
            f"{framework} takes {1 - best.share:.0%} of each request's time there"
        )
    else:
        text += f" (no ceiling of its own: {best.no_ceiling})"
    if len(rows) == 1:
        alone = "the only server with a clean measurement" if unranked else "one server measured"
        return f"{text}; {alone}, nothing to rank{_left_out(unranked)}."
    worst = rows[-1]
    cells = {c.cell.server: c for c in _at(load.cells, level) if _counted(c)}
    verdict = compare_starts(
        cells[best.server].starts("rps_ok"), cells[worst.server].starts("rps_ok")
    )
    ratio = best.rps / worst.rps if worst.rps else float("inf")
    spread = f"{ratio:.2f}× the slowest, {worst.server} ({fmt.rps(worst.rps)})"
    if verdict.testable and not verdict.beyond_noise:
        said = (
            f"{text}; {spread}, but the server choice changes {framework} by less than the "
            f"noise ({verdict.method})"
        )
    elif not verdict.testable:
        said = f"{text}; {spread} by value ({verdict.method})"
    else:
        said = f"{text}; {spread} ({verdict.method})"
    return f"{said}{_left_out(unranked)}."
