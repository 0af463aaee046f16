"""Protocol findings, per server, between two loads that differ only in how each request travels:
h2c against HTTP/1.1 keep-alive, h2 against HTTP/1.1 over TLS, and TLS against clear text (its
cost in req/s and in CPU per request). Every difference is tested on the server starts, the false
discovery rate kept over all of them (Benjamini–Hochberg)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wsgibench.report import format as fmt
from wsgibench.report.data import CellData, LoadData, ReportData
from wsgibench.results.repeat import StoredRepeat
from wsgibench.results.significance import ALPHA, NOISE, Verdict, adjusted, compare_starts
from wsgibench.results.verdict import CellStatus

# The keys two loads may differ in and still be the same load over another protocol.
_TRAVEL = {"name", "protocol", "streams", "tls", "levels", "role", "http", "keep_alive"}


def _protocol(cfg: dict[str, Any]) -> tuple[str, bool]:
    protocol = str(cfg.get("protocol", "http"))
    return protocol, bool(cfg.get("tls", protocol == "h2"))


def _shape(cfg: dict[str, Any]) -> str:
    http = cfg.get("http", "1.1")
    keep = cfg.get("keep_alive", http == "1.1")
    rest = sorted((k, repr(v)) for k, v in cfg.items() if k not in _TRAVEL)
    return repr((http, keep, rest))


@dataclass(frozen=True)
class Pair:
    """A load and the one it is compared against: what it changes, in words."""

    load: LoadData
    base: LoadData
    what: str  # "h2c", "h2", "tls"

    def sides(self) -> tuple[str, str]:
        """How each side's requests travelled, in words."""
        return {
            "h2c": ("over h2c", "over HTTP/1.1"),
            "h2": ("over h2", "over HTTP/1.1 with TLS"),
        }.get(self.what, ("with TLS", "in clear text"))

    def title(self) -> str:
        streams = int(self.load.config.get("streams", 1))
        over = f"{streams} stream{'s' if streams != 1 else ''} per connection"
        if self.what == "h2c":
            return f"h2c ({self.load.name}, {over}) against HTTP/1.1 keep-alive ({self.base.name})"
        if self.what == "h2":
            return f"h2 by ALPN ({self.load.name}, {over}) against HTTP/1.1 over TLS ({self.base.name})"
        return f"the cost of TLS: {self.load.name} against clear text ({self.base.name})"


def pairs(data: ReportData) -> list[Pair]:
    """Each h2c, h2 or TLS load beside the load of the same shape it is to be read against."""
    swept = [load for load in data.loads if not load.is_capacity and load.role != "broadcast"]
    found = []
    for load in swept:
        protocol, tls = _protocol(load.config)
        wanted = {"h2c": ("http", False), "h2": ("http", True)}.get(protocol)
        what = protocol
        if protocol == "http" and tls:
            wanted, what = ("http", False), "tls"
        if wanted is None:
            continue
        base = next(
            (
                b
                for b in swept
                if _protocol(b.config) == wanted and _shape(b.config) == _shape(load.config)
            ),
            None,
        )
        if base is not None:
            found.append(Pair(load, base, what))
    return found


def _cpu_us(r: StoredRepeat) -> float | None:
    per = r.per_cpu_s
    return 1e6 / per if per else None


@dataclass
class _Test:
    verdict: Verdict
    p: float | None = None  # adjusted


def _clean(load: LoadData, server: str, level: float) -> CellData | str:
    """The server's clean cell at this level, or why it has none."""
    cell = next((c for c in load.cells if c.cell.server == server and c.cell.level == level), None)
    if cell is None:
        return f"no {load.name} cell"
    if cell.cell.status == CellStatus.MEASURED and cell.values("rps_ok"):
        return cell
    return f"{load.name} {cell.cell.status}" + (f": {cell.cell.reason}" if cell.cell.reason else "")


def _said(t: _Test, more: str, fewer: str) -> str:
    v = t.verdict
    change = f"{abs(v.change):.0%} " if v.change is not None else ""
    if not v.testable or t.p is None:
        return f"{change}{more if (v.change or 0) > 0 else fewer} by value"
    if t.p < ALPHA and v.change is not None and abs(v.change) >= NOISE:
        return f"{change}{more if v.change > 0 else fewer} (adjusted p = {t.p:.2g})"
    return f"within noise (adjusted p = {t.p:.2g})"


def findings(data: ReportData) -> list[str]:
    """One sentence per pair and level both ran: each server's figures on both sides and the
    difference as the rule of every claim allows; the method said once per sentence."""
    plans: list[tuple[Pair, float, list[tuple[str, CellData | str, CellData | str]]]] = []
    tests: list[_Test] = []
    for pair in pairs(data):
        for level in sorted(set(pair.load.levels) & set(pair.base.levels)):
            servers = sorted({c.cell.server for c in pair.load.cells + pair.base.cells})
            sides = [(s, _clean(pair.load, s, level), _clean(pair.base, s, level)) for s in servers]
            plans.append((pair, level, sides))
            for _, a, b in sides:
                if isinstance(a, CellData) and isinstance(b, CellData):
                    tests.append(_Test(compare_starts(b.starts("rps_ok"), a.starts("rps_ok"))))
                    if pair.what == "tls" and a.by_start(_cpu_us) and b.by_start(_cpu_us):
                        tests.append(
                            _Test(compare_starts(b.by_start(_cpu_us), a.by_start(_cpu_us)))
                        )
    testable = [t for t in tests if t.verdict.testable and t.verdict.p_value is not None]
    for t, p in zip(testable, adjusted([t.verdict.p_value or 1.0 for t in testable]), strict=True):
        t.p = p
    queue = iter(tests)
    return [_sentence(pair, level, sides, queue) for pair, level, sides in plans]


def _sentence(
    pair: Pair, level: float, sides: list[tuple[str, CellData | str, CellData | str]], queue: Any
) -> str:
    field = pair.load.level_field
    said, untested = [], set()
    for server, a, b in sides:
        if not isinstance(a, CellData) or not isinstance(b, CellData):
            said.append(f"{server} not compared ({a if isinstance(a, str) else b})")
            continue
        rps = next(queue)
        over, base = pair.sides()
        text = (
            f"{server} {fmt.rps(a.median('rps_ok'))} req/s {over} against "
            f"{fmt.rps(b.median('rps_ok'))} {base}, " + _said(rps, "more", "fewer")
        )
        untested |= {rps.verdict.method} if rps.p is None else set()
        if pair.what == "tls" and a.by_start(_cpu_us) and b.by_start(_cpu_us):
            cpu = next(queue)
            text += (
                f", CPU per request {fmt.whole(cpu.verdict.median_b)} µs against "
                f"{fmt.whole(cpu.verdict.median_a)} µs, " + _said(cpu, "more", "less")
            )
        said.append(text)
    method = "Student's t on the logs of the server starts' medians, the FDR kept over these"
    method += "".join(f"; by value: {why}" for why in sorted(untested))
    return f"{pair.title()}, {field} {level:g}: " + "; ".join(said) + f" ({method})."
