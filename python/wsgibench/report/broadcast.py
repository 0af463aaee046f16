"""A broadcast load's finding: every server is sent the publisher's fixed rate, so its deliveries
per second rank none; the servers are judged on delivery latency (from each message's due time to
its receipt) and on the deliveries lost, duplicated or corrupt."""

from __future__ import annotations

from wsgibench.report import format as fmt
from wsgibench.report.data import CellData, LoadData
from wsgibench.results.latency import bounds
from wsgibench.results.significance import compare_starts
from wsgibench.results.verdict import CellStatus
from wsgibench.results.websocket_result import BroadcastResult


def _counted(cells: list[CellData]) -> list[CellData]:
    """The clean cells with a delivery latency, lowest p99 first."""
    found = [
        c for c in cells if c.cell.status == CellStatus.MEASURED and c.values("latency_p99_us")
    ]
    return sorted(found, key=lambda c: c.median("latency_p99_us") or 0.0)


def _p99(c: CellData) -> str:
    """The median p99 in ms, "≥" when a repeat's p99 falls on lost messages (timed at the
    timeout, never received)."""
    floor = any("p99" in bounds(r.engine) for r in c.repeats)
    return f"{'≥' if floor else ''}{fmt.ms(c.median('latency_p99_us'))} ms"


def fan_out(c: CellData) -> BroadcastResult:
    """Every repeat's fan-out added: published, due, delivered, lost, corrupt, duplicated."""
    parts = [
        r.engine.websocket.broadcast
        for r in c.repeats
        if r.engine.websocket is not None and r.engine.websocket.broadcast is not None
    ]
    return BroadcastResult(
        published=sum(p.published for p in parts),
        due=sum(p.due for p in parts),
        delivered=sum(p.delivered for p in parts),
        lost=sum(p.lost for p in parts),
        corrupt=sum(p.corrupt for p in parts),
        duplicates=sum(p.duplicates for p in parts),
        publisher_open=all(p.publisher_open for p in parts) and bool(parts),
    )


def _losses(cells: list[CellData]) -> str:
    said = []
    for c in cells:
        f = fan_out(c)
        bad = f.lost + f.corrupt
        if bad or f.duplicates:
            share = f" ({bad / f.due:.3%})" if f.due else ""
            said.append(
                f"{c.cell.server} {f.lost:,} lost and {f.corrupt:,} corrupt of {f.due:,} due"
                f"{share}, {f.duplicates:,} duplicated"
            )
    return "; ".join(said) if said else "no delivery lost, corrupt or duplicated"


def _claim(first: CellData, second: CellData, cite: str) -> str:
    """The lowest p99 against the next by the rule of every claim between servers."""
    verdict = compare_starts(first.starts("latency_p99_us"), second.starts("latency_p99_us"))
    name, other = first.cell.server, second.cell.server
    if not verdict.testable:
        return f"{name} lowest by value ({verdict.method})"
    if verdict.beyond_noise:
        calibrated = cite or "no A/A calibration of this machine stored: wsgibench calibrate"
        return (
            f"{name} lowest, ahead of {other} (p = {verdict.p_value:.2g}, {verdict.method}; "
            f"{calibrated})"
        )
    return f"{name} and {other} tied within noise ({verdict.method})"


def finding(load: LoadData, level: float, cite: str = "") -> str | None:
    """One sentence on a broadcast load at one level: the fixed rate that ranks none, each
    server's delivery p99, who is lowest (tested on the server starts), and what was lost."""
    cells = [c for c in load.cells if c.cell.level == level]
    counted = _counted(cells)
    if not counted:
        return None
    rate = load.config.get("publish_rate")
    fixed = f"{rate:g} messages/s" if isinstance(rate, (int, float)) else "a fixed rate"
    text = (
        f"{load.name}, {load.level_field} {level:g}: every server was sent the publisher's "
        f"{fixed} to each subscriber, so deliveries per second rank none; delivery latency p99 "
        "(from each message's due time to its receipt): "
        + ", ".join(f"{c.cell.server} {_p99(c)}" for c in counted)
    )
    if len(counted) > 1:
        text += f"; {_claim(counted[0], counted[1], cite)}"
    return f"{text}; {_losses(counted)}."
