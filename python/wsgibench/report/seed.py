"""The report's "against the seed" section: each figure the seed published beside ours, ratios,
rank agreement (Kendall's tau), and a plain sentence per finding: held, changed, or not
comparable and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wsgibench.report.data import CellData, ReportData
from wsgibench.results.seed_claims import claims, kendall_tau


@dataclass
class Finding:
    what: str
    theirs: str
    ours: str
    verdict: str  # held | changed | not comparable
    sentence: str
    source: str


def _cells(
    data: ReportData, server: str, level: float | None, load: str | None = None
) -> list[CellData]:
    """A server's cells with repeats, at one level (or all) of one load (or all)."""
    return [
        c
        for each in data.loads
        if load is None or each.name == load
        for c in each.cells
        if c.cell.server == server and (level is None or c.cell.level == level) and c.repeats
    ]


def _value(cells: list[CellData], metric: str) -> float | None:
    """A server's figure: its median at the level, or over every level (errors: all requests)."""
    if not cells:
        return None
    if metric == "error_rate":
        errors = sum(r["errors"] or 0 for c in cells for r in c.repeats)
        total = errors + sum(r["ok"] or 0 for c in cells for r in c.repeats)
        return errors / total if total else None
    medians = [m for c in cells if (m := c.median(metric)) is not None]
    return max(medians) if medians else None


def _fmt(metric: str, value: float | None) -> str:
    if value is None:
        return "not measured"
    return f"{value:.1%}" if metric == "error_rate" else f"{value:,.2f}"


def _figure(data: ReportData, f: dict[str, Any], why_not: str | None) -> Finding:
    metric, theirs = f["metric"], float(f["theirs"])
    ours = _value(_cells(data, f["server"], f.get("level"), f.get("load")), metric)
    if ours is None:
        verdict, sentence = "not comparable", f"{f['server']} was not measured in this run"
    elif why_not or f.get("comparable"):
        verdict = "not comparable"
        sentence = f"{_fmt(metric, ours)} here; {why_not or f['comparable']}"
    elif metric == "error_rate":
        held = (ours > 0.05) == (theirs > 0.05)
        verdict = "held" if held else "changed"
        sentence = (
            f"{f['server']} fails {_fmt(metric, ours)} of its requests here against "
            f"{_fmt(metric, theirs)} then"
        )
    else:
        within = abs(ours / theirs - 1) <= 0.25 if theirs else False
        verdict = "held" if within else "changed"
        sentence = f"{f['server']}: {_fmt(metric, ours)} here against {_fmt(metric, theirs)}" + (
            " (within 25 %)" if within else f" ({ours / theirs:.2f}×)"
        )
    return Finding(
        f["what"], _fmt(metric, theirs), _fmt(metric, ours), verdict, sentence, f["source"]
    )


def _ratio(data: ReportData, r: dict[str, Any], why_not: str | None = None) -> Finding:
    a = _value(_cells(data, r["a"], r.get("level"), r.get("load")), r["metric"])
    b = _value(_cells(data, r["b"], r.get("level"), r.get("load")), r["metric"])
    theirs = float(r["theirs"])
    if a is None or not b:
        return Finding(
            r["what"],
            f"{theirs:.2f}×",
            "-",
            "not comparable",
            f"{r['a']} or {r['b']} was not measured in this run",
            r["source"],
        )
    ours = a / b
    same_side = (ours > 1) == (theirs > 1)
    within = abs(ours / theirs - 1) <= 0.25
    verdict = "held" if same_side and within else "changed"
    how = (
        "held" if verdict == "held" else "same direction, another size" if same_side else "reversed"
    )
    if why_not:  # the run changed what the ratio depends on (e.g. a shorter sleep)
        verdict, how = "not comparable", f"{how}; {why_not}"
    return Finding(
        r["what"],
        f"{theirs:.2f}×",
        f"{ours:.2f}×",
        verdict,
        f"{r['a']} / {r['b']} = {ours:.2f}× here, {theirs:.2f}× then: {how}",
        r["source"],
    )


def _ranking(data: ReportData, r: dict[str, Any]) -> Finding:
    values = {
        s: v
        for s in r["order"]
        if (v := _value(_cells(data, s, r.get("level"), r.get("load")), r["metric"])) is not None
    }
    ours = sorted(values, key=lambda s: -values[s])
    tau, common = kendall_tau(ours, r["order"])
    if tau is None:
        return Finding(
            r["what"],
            " > ".join(r["order"]),
            " > ".join(ours),
            "not comparable",
            "fewer than two of the seed's servers were measured here",
            r["source"],
        )
    mine = [s for s in ours if s in common]  # ranks among the servers both runs measured
    moved = [
        f"{s} {common.index(s) + 1} → {mine.index(s) + 1}"
        for s in common
        if common.index(s) != mine.index(s)
    ]
    verdict = "held" if tau >= 0.6 else "changed"
    sentence = f"Kendall's τ = {tau:.2f} over the {len(common)} servers measured both times" + (
        f"; ranks moved: {', '.join(moved)}" if moved else "; the same order"
    )
    return Finding(
        r["what"], " > ".join(r["order"]), " > ".join(ours), verdict, sentence, r["source"]
    )


def against_seed(data: ReportData) -> tuple[dict[str, Any], list[Finding]] | None:
    """The seed's claims and our finding for each, or None for a study with no seed data."""
    seed = claims(data.meta.name)
    if seed is None:
        return None
    why_not = None
    wanted = seed.get("app_env") or {}
    ran = data.meta.config.get("app_env") or {}
    if any(str(ran.get(k, v)) != str(v) for k, v in wanted.items()):
        why_not = f"this run changed the seed's setting ({ran}), so absolute figures differ"
    found = [_figure(data, f, why_not) for f in seed.get("figure", [])]
    found += [_ratio(data, r, why_not) for r in seed.get("ratio", [])]
    found += [_ranking(data, r) for r in seed.get("ranking", [])]
    return seed, found


def sentence(f: Finding) -> str:
    return f"{f.what}: {f.verdict} — {f.sentence}."
