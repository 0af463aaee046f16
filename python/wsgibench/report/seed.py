"""The report's "against the seed" section: each claim the seed states, quoted with its line, beside
what this run measured, with a verdict (held, changed, not comparable and why) by the rules of
docs/seed-verdicts.md, the counts of each, and what the study does differently from the seed."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from wsgibench.baseline import BASELINE
from wsgibench.report.data import CellData, ReportData
from wsgibench.results.latency import by_kind, overall
from wsgibench.results.repeat import StoredRepeat, start_of
from wsgibench.results.seed_claims import NotClaimed, SeedClaims, claims
from wsgibench.results.seed_errors import tool_errors
from wsgibench.results.seed_rules import judge
from wsgibench.results.seed_verdicts import (
    CHANGED,
    HELD,
    NOT_COMPARABLE,
    Point,
    RunView,
    Samples,
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

    @property
    def not_claimed(self) -> tuple[NotClaimed, ...]:
        """The seed's lines with a finding no claim judges, each with why."""
        return self.seed.not_claimed

    def counts(self) -> dict[str, int]:
        return {
            v: sum(1 for x in self.verdicts if x.verdict == v)
            for v in (HELD, CHANGED, NOT_COMPARABLE)
        }

    def tally(self) -> str:
        c = self.counts()
        return f"{c[HELD]} held, {c[CHANGED]} changed, {c[NOT_COMPARABLE]} not comparable"


READ_CLASS = {"wrk": "read", "httperf": "connreset", "ab": "receive"}  # each tool's read errors


def _put(out: dict[str, list[float]], key: str, value: float | None, scale: float = 1.0) -> None:
    if value is not None:
        out.setdefault(key, []).append(float(value) / scale)


def _repeat_errors(out: dict[str, list[float]], c: CellData, r: StoredRepeat) -> None:
    """One repeat's errors, attempts and error rate, ours and as wrk, httperf and ab counted
    them: one test each, as the seeds counted theirs."""
    totals = r.engine.totals
    attempts = totals.ok + totals.error_count
    _put(out, "errors", totals.error_count)
    _put(out, "attempts", attempts)
    _put(out, "error_rate", totals.error_count / attempts if attempts else None)
    for tool, read in READ_CLASS.items():
        t = tool_errors(r.engine, c.cell.capabilities, tool)
        seen = t.errors + t.requests
        _put(out, f"errors:{tool}", t.errors)
        _put(out, f"attempts:{tool}", seen)
        _put(out, f"error_rate:{tool}", t.rate if seen else None)
        per_reply = t.by_class.get(read, 0) / t.requests if t.requests else None
        _put(out, f"read_errors_per_reply:{tool}", per_reply)


def _per_repeat(c: CellData, repeats: list[StoredRepeat] | None = None) -> dict[str, list[float]]:
    """Every value a claim may read, one per repeat that has it (the cell's, or those given):
    latency overall and per request kind, memory, CPU, and errors per test (ours and as each
    seed's tool counted them)."""
    out: dict[str, list[float]] = {}
    for r in c.repeats if repeats is None else repeats:
        _put(out, "rps_ok", r.rps_ok)
        h = overall(r.engine)
        _put(out, "latency_mean_ms", h.mean if h is not None else None, 1000)
        for column in ("p50", "p99", "max"):
            _put(out, f"latency_{column}_ms", r.column(f"latency_{column}_us"), 1000)
        for name, kind in by_kind(r.engine).items():
            for column in ("mean", "p50", "p99", "max"):
                _put(out, f"latency_{column}_ms@{name}", kind[f"{column}_us"], 1000)
        for column in ("peak", "start", "end"):
            _put(out, f"rss_{column}_mb", r.column(f"rss_{column}_bytes"), MIB)
        if r.rss_peak_bytes and r.processes_peak:
            _put(out, "rss_per_process_mb", r.rss_peak_bytes / r.processes_peak, MIB)
        if r.rss_start_bytes and r.rss_end_bytes:
            _put(out, "rss_growth", r.rss_end_bytes / r.rss_start_bytes)
        _put(out, "cpu_pct", r.cpu_mean_pct)
        _repeat_errors(out, c, r)
    return out


def _values(c: CellData) -> tuple[dict[str, float | None], dict[str, Samples]]:
    """A cell's values as the claims read them (medians over its repeats: a test's errors as the
    seed counted one test, not summed) and the repeats behind each, per server start (the unit a
    difference is tested on); whether it kept a connection alive for two requests, from its
    behaviour check."""
    per = _per_repeat(c)
    values: dict[str, float | None] = {k: statistics.median(v) for k, v in per.items() if v}
    caps = c.cell.capabilities
    if caps:
        values["keep_alive"] = 1.0 if caps.get("keep_alive") else 0.0
    by_start: dict[int, list[StoredRepeat]] = {}
    for r in c.repeats:
        by_start.setdefault(start_of(r), []).append(r)
    starts = [_per_repeat(c, by_start[k]) for k in sorted(by_start)]
    samples = {k: tuple(tuple(s.get(k, ())) for s in starts if s.get(k)) for k in per}
    return values, samples


def _point(c: CellData) -> Point | None:
    """A cell as a claim may use it, or None when the server was not measured there at all."""
    status, reason = c.cell.status, c.cell.reason or ""
    values, samples = _values(c)
    if status == CellStatus.DISQUALIFIED:
        kept = values if c.repeats else {}
        return Point(c.cell.level, kept, failed=f"disqualified ({reason})", samples=samples)
    if status != CellStatus.MEASURED or not c.repeats:
        if status in (CellStatus.INVALID, CellStatus.CONTENDED, CellStatus.DEATHS):
            return Point(c.cell.level, {}, untrusted=f"{status} ({reason})")
        return None
    codes = {d.get("code"): d.get("message", "") for d in c.cell.diagnoses or []}
    untrusted = "; ".join(text for code, text in UNTRUSTED_CODES.items() if code in codes) or None
    doubts = {}
    if "littles-law" in codes:  # its latency misses requests: no latency claim rests on it
        doubts = {m: "latency fails Little's law" for m in ("latency_mean_ms", "latency_p50_ms")}
    return Point(c.cell.level, values, untrusted=untrusted, doubts=doubts, samples=samples)


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
        "requests": {load.name: load.config.get("requests") for load in data.loads},
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


def note(v: Verdict) -> str:
    """What the claims file says of the claim beside the seed's words (how it reads them, what
    stands in for what), or nothing."""
    said = v.claim.get("note")
    return f"Note: {said}." if said else ""
