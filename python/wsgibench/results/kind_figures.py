"""Each request kind's own figures over a cell's repeats, for loads with several kinds (a mix of
[[requests]], a replayed log): its requests, valid replies per second, latency percentiles (the
median over the repeats of each repeat's, as the headline's), errors and their classes; and a
trace's seconds: the requests due in each (the log's rate, at its speed) beside the p99 of the
replies completed in it."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from wsgibench.results.engine_result import EngineResult, KindResult


@dataclass(frozen=True)
class KindFigures:
    name: str
    sent: int  # requests sent, over the repeats
    ok: int
    errors: int  # requests that failed, over the repeats (connect errors included)
    rps_ok: float | None  # valid replies a second of the measured window, median over repeats
    p50_us: float | None
    p90_us: float | None
    p99_us: float | None
    max_us: float | None
    classes: dict[str, int] = field(default_factory=dict)  # errors by class
    codes: dict[str, int] = field(default_factory=dict)  # bad statuses by code

    @property
    def error_rate(self) -> float | None:
        done = self.ok + self.errors
        return self.errors / done if done else None

    def classes_text(self, n: int = 3) -> str:
        """The commonest error classes ("bad_status 12 (500 ×12), timeout 3"), or ""."""
        found = sorted(((k, v) for k, v in self.classes.items() if v), key=lambda kv: -kv[1])
        parts = []
        for name, count in found[:n]:
            codes = ", ".join(f"{c} ×{k}" for c, k in sorted(self.codes.items()))
            parts.append(f"{name} {count:,}" + (f" ({codes})" if name == "bad_status" else ""))
        return ", ".join(parts)


PERCENTILES = ("p50", "p90", "p99", "max")


def kind_names(results: Sequence[EngineResult]) -> list[str]:
    """The kinds of the results, in the plan's order."""
    return list(dict.fromkeys(k.name for r in results for k in r.kinds))


def several_kinds(results: Sequence[EngineResult]) -> bool:
    return len(kind_names(results)) > 1


def kind_figures(results: Sequence[EngineResult]) -> list[KindFigures]:
    """Each kind's figures over the repeats' engine results (one entry a kind, plan order)."""
    out = []
    for name in kind_names(results):
        runs = [(r, k) for r in results for k in r.kinds if k.name == name]
        classes: dict[str, int] = {}
        codes: dict[str, int] = {}
        for _, k in runs:
            _add(classes, k.errors)
            _add(codes, k.bad_status_codes)
        p50, p90, p99, top = (_median([_pct(k, p) for _, k in runs]) for p in PERCENTILES)
        out.append(
            KindFigures(
                name,
                sum(k.requests_sent for _, k in runs),
                sum(k.ok for _, k in runs),
                sum(classes.values()),
                _median([_rps(r, k) for r, k in runs]),
                p50,
                p90,
                p99,
                top,
                classes,
                codes,
            )
        )
    return out


def _add(into: dict[str, int], counts: dict[str, int]) -> None:
    for key, value in counts.items():
        into[key] = into.get(key, 0) + value


def _rps(result: EngineResult, kind: KindResult) -> float | None:
    """A kind's valid replies a second of the measured window: those within it where the engine
    says (its per-kind `ok_in_window`), else all of them over the window."""
    window = result.totals.window_s or result.elapsed_s
    if not window:
        return None
    docs: list[dict[str, Any]] = result.raw.get("kinds") or []
    raw = next((k for k in docs if k.get("name") == kind.name), {})
    return float(raw.get("ok_in_window", kind.ok)) / window


def _pct(kind: KindResult, which: str) -> float | None:
    lat = kind.latency
    if lat is None or not lat.count:
        return None
    return float(getattr(lat, which))


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


@dataclass(frozen=True)
class TraceSecond:
    t_s: int
    arrivals: int  # requests due in the second (the log's, at the speed)
    p99_us: int | None  # of the replies completed in it (None: none, or a merged result)


def trace_seconds(result: EngineResult) -> list[TraceSecond]:
    """A trace's timeline: each second's requests due and the p99 of its replies; [] when the
    result is not a trace's."""
    if result.plan.model.kind != "trace":
        return []
    seconds = []
    for raw, s in zip(result.raw.get("timeline") or (), result.timeline, strict=False):
        if "arrivals" not in raw:
            return []
        p99 = s.p99_us if s.p99_us and (s.completed or 0) > 0 else None
        seconds.append(TraceSecond(s.t_s, int(raw["arrivals"]), p99))
    return seconds
