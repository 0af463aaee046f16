"""The report's "against the seed" section: each claim the seed states, quoted with its line, beside
what this run measured, with a verdict (held, changed, not comparable and why) by the rules of
docs/seed-verdicts.md, the counts of each, and what the study does differently from the seed."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from wsgibench.baseline import BASELINE
from wsgibench.report.data import CellData, ReportData
from wsgibench.results.latency import overall
from wsgibench.results.seed_claims import SeedClaims, claims
from wsgibench.results.seed_errors import tool_errors
from wsgibench.results.seed_rules import judge
from wsgibench.results.seed_verdicts import (
    CHANGED,
    HELD,
    NOT_COMPARABLE,
    Point,
    RunView,
    Verdict,
)
from wsgibench.results.significance import compare_starts
from wsgibench.results.verdict import CellStatus

UNITS = {"connections": "connections", "rate": "/s", "users_per_s": "users/s", "concurrency": ""}
UNTRUSTED_CODES = {"contended": "contended", "engine-saturated": "the engine was saturated"}
MIB = 2**20


@dataclass(frozen=True)
class SeedSection:
    seed: SeedClaims
    verdicts: list[Verdict]
    deviations: list[str]
    # `run --versions seed`: per load and server, the seed's release beside today's
    releases: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            v: sum(1 for x in self.verdicts if x.verdict == v)
            for v in (HELD, CHANGED, NOT_COMPARABLE)
        }

    def tally(self) -> str:
        c = self.counts()
        return f"{c[HELD]} held, {c[CHANGED]} changed, {c[NOT_COMPARABLE]} not comparable"


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _errors(c: CellData, out: dict[str, float | None]) -> None:
    """Errors and attempts summed over the repeats: ours, and as wrk, httperf and ab counted."""
    classes, attempts = c.error_classes()
    errors = sum(classes.values())
    out.update(errors=errors, attempts=attempts, error_rate=errors / attempts if attempts else None)
    for tool in ("wrk", "httperf", "ab"):
        counted = [tool_errors(r.engine, c.cell.capabilities, tool) for r in c.repeats]
        e = sum(t.errors for t in counted)
        a = sum(t.errors + t.requests for t in counted)
        out.update(
            {f"errors:{tool}": e, f"attempts:{tool}": a, f"error_rate:{tool}": e / a if a else None}
        )


def _values(c: CellData) -> dict[str, float | None]:
    """A cell's values as the claims read them: medians over its repeats, errors summed."""
    means = [h.mean / 1000 for r in c.repeats if (h := overall(r.engine)) is not None]
    per_process = [
        r.rss_peak_bytes / r.processes_peak / MIB
        for r in c.repeats
        if r.rss_peak_bytes and r.processes_peak
    ]

    def mib(column: str) -> float | None:
        v = c.median(column)
        return v / MIB if v is not None else None

    out: dict[str, float | None] = {
        "rps_ok": c.median("rps_ok"),
        "latency_mean_ms": _median(means),
        "latency_p50_ms": (v / 1000) if (v := c.median("latency_p50_us")) is not None else None,
        "rss_peak_mb": mib("rss_peak_bytes"),
        "rss_start_mb": mib("rss_start_bytes"),
        "rss_end_mb": mib("rss_end_bytes"),
        "rss_per_process_mb": _median(per_process),
        "cpu_pct": c.median("cpu_mean_pct"),
    }
    _errors(c, out)
    return out


def _point(c: CellData) -> Point | None:
    """A cell as a claim may use it, or None when the server was not measured there at all."""
    status, reason = c.cell.status, c.cell.reason or ""
    if status == CellStatus.DISQUALIFIED:
        return Point(
            c.cell.level, _values(c) if c.repeats else {}, failed=f"disqualified ({reason})"
        )
    if status != CellStatus.MEASURED or not c.repeats:
        if status == CellStatus.INVALID:
            return Point(c.cell.level, {}, untrusted=f"invalid ({reason})")
        return None
    codes = {d.get("code"): d.get("message", "") for d in c.cell.diagnoses or []}
    untrusted = "; ".join(text for code, text in UNTRUSTED_CODES.items() if code in codes) or None
    doubts = {}
    if "littles-law" in codes:  # its latency misses requests: no latency claim rests on it
        doubts = {m: "latency fails Little's law" for m in ("latency_mean_ms", "latency_p50_ms")}
    return Point(c.cell.level, _values(c), untrusted=untrusted, doubts=doubts)


def _absent(data: ReportData) -> dict[str, str]:
    out: dict[str, str] = {}
    for load in data.loads:
        for c in load.cells:
            if (
                c.cell.status in (CellStatus.UNAVAILABLE, CellStatus.FAILED)
                and c.cell.server not in out
            ):
                out[c.cell.server] = f"{c.cell.status} ({c.cell.reason or 'no reason stored'})"
    return out


def run_view(data: ReportData) -> RunView:
    """What the run measured, point by point, with its settings that claims may depend on."""
    points: dict[str, dict[str, list[Point]]] = {}
    units: dict[str, str] = {}
    for load in data.loads:
        units[load.name] = UNITS.get(load.level_field, load.level_field)
        by_server = points.setdefault(load.name, {})
        for c in load.cells:
            if c.cell.server != BASELINE and (p := _point(c)) is not None:
                by_server.setdefault(c.cell.server, []).append(p)
    cfg, env = data.meta.config, data.meta.environment
    cpus = len((env.get("layout") or {}).get("server_cpus") or []) or cfg.get("server_cpu_count")
    settings: dict[str, Any] = {
        "server_cpus": cpus,
        "durations": {load.name: load.config.get("duration_s") for load in data.loads},
        "app_env": cfg.get("app_env") or {},
        "memory_limit_mb": cfg.get("memory_limit_mb", 512),
    }
    return RunView(points, settings, _absent(data), units)


def against_seed(data: ReportData) -> SeedSection | None:
    """Every claim of the study's seed judged against this run, or None for a study with none."""
    seed = claims(data.meta.name)
    if seed is None:
        return None
    view = run_view(data)
    verdicts = [judge(claim, seed, view) for claim in seed.claims]
    deviations = list(data.meta.config.get("deviations") or [])
    return SeedSection(seed, verdicts, deviations, release_lines(data))


def release_lines(data: ReportData) -> list[str]:
    """Where a server ran at its seed's release beside today's (`name@version` beside `name`):
    per load, at the level where today's release did best, each one's req/s and whether the
    difference is beyond the noise of the repeats (compare's test); only then does the release
    account for a change between the seed and today."""
    lines = []
    for load in data.loads:
        cells = {(c.cell.server, c.cell.level): c for c in load.cells}
        for name in sorted({server for server, _ in cells}):
            base, _, release = name.partition("@")
            rated = [
                lv
                for (s, lv) in cells
                if s == name
                and (base, lv) in cells
                and None
                not in (cells[(name, lv)].median("rps_ok"), cells[(base, lv)].median("rps_ok"))
            ]
            if not release or not rated:
                continue
            level = max(rated, key=lambda lv: cells[(base, lv)].median("rps_ok") or 0.0)
            old, new = cells[(name, level)], cells[(base, level)]
            verdict = compare_starts(old.starts("rps_ok"), new.starts("rps_ok"))
            change = verdict.change_pct
            why = (
                f"beyond the noise ({verdict.method}): the release alone accounts for {change} here"
                if verdict.beyond_noise
                else f"within the noise ({verdict.method}): no effect of the release shown"
            )
            version = (new.cell.server_info or {}).get("version") or "?"
            lines.append(
                f"{load.name} at {level:g}: {base} {release} (the seed's) "
                f"{verdict.median_a:,.0f} req/s, {version} (today's) {verdict.median_b:,.0f} "
                f"({change}), {why}"
            )
    return lines


def sentence(v: Verdict) -> str:
    return f"{v.claim.what}: {v.verdict} — {v.sentence}."
