"""A seed's claim against a run: the points the verdicts read, which cells a claim rests on (trusted
ones only), whether the run kept the seed's settings it depends on, and the verdict (held, changed,
not comparable) that `seed_rules.judge` gives by the rule of its kind (docs/seed-verdicts.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wsgibench.results.seed_claims import METRICS, Claim, SeedClaims

HELD, CHANGED, NOT_COMPARABLE = "held", "changed", "not comparable"
ERROR_METRICS = ("error_rate", "errors", "read_errors_per_reply")
ERROR_KINDS = ("no_errors", "error_onset")
COUNTED = (*ERROR_METRICS, "attempts")  # values kept per counting: ours, wrk, httperf, ab


# A value's repeats, one tuple per server start (the unit a difference is tested on).
Samples = tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class Point:
    """One server at one level of one load: its values (medians over repeats; error counts summed),
    and why the cell cannot be trusted or why it failed (disqualified, died), if so."""

    level: float
    values: Mapping[str, float | None]
    untrusted: str | None = None  # invalid, contended, engine-saturated: no claim rests on it
    failed: str | None = None  # disqualified or stopped answering: a failure, for error claims
    doubts: Mapping[str, str] = field(default_factory=dict)  # metric -> why it cannot be used
    # value key -> each server start's repeats' values, for whether a difference is noise
    samples: Mapping[str, Samples] = field(default_factory=dict)


@dataclass
class RunView:
    """What a run measured, as the verdicts read it."""

    points: dict[str, dict[str, list[Point]]]  # load -> server -> points by level
    settings: dict[str, Any] = field(default_factory=dict)  # server_cpus, durations, app_env, ...
    absent: dict[str, str] = field(default_factory=dict)  # server -> why it was not measured
    level_unit: dict[str, str] = field(default_factory=dict)  # load -> "connections", "rate", ...


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    verdict: str  # held | changed | not comparable
    theirs: str
    ours: str
    sentence: str
    rests_on: tuple[tuple[str, float], ...] = ()  # (server, level) of every cell it may read


def value_key(claim: Claim, what: str | None = None) -> str:
    """The key of a point's values a claim reads: error metrics carry the counting they use
    ("errors:wrk"), a request kind's latency its kind ("latency_mean_ms@fast")."""
    metric = what or claim.metric
    if metric in COUNTED and claim.counting != "ours":
        return f"{metric}:{claim.counting}"
    if claim.get("request") and metric.startswith("latency_"):
        return f"{metric}@{claim.get('request')}"
    return metric


def fmt(metric: str, value: float | None) -> str:
    if value is None:
        return "—"
    if metric == "error_rate":
        return f"{value:.1%}"
    if metric == "keep_alive":
        return "yes" if value >= 1 else "no"
    if metric == "rss_growth":
        return f"{value:.2f}×"
    if metric == "errors":
        return f"{value:,.0f} error" + ("" if value == 1 else "s")
    if metric == "read_errors_per_reply":
        return f"{value:.2f} per reply"
    unit = METRICS.get(metric, ("", None))[0]
    digits = 2 if abs(value) < 100 and metric != "errors" else 0
    return f"{value:,.{digits}f}" + (f" {unit}" if unit and metric != "errors" else "")


def theirs_text(claim: Claim) -> str:
    """The seed's side as the claim reads it, and whose its number is: the seed's own, or the
    project's reading of words that give none (never called the seed's)."""
    text = plain_theirs(claim)
    if claim.get("rough"):
        text += " (roughly: a swap within the noise holds)"
    source = claim.get("threshold_source")
    if source == "project":
        return f"{text} (the project's reading: {claim.get('reading')})"
    return f"{text} (the seed's number)" if source == "seed" else text


def plain_theirs(claim: Claim) -> str:
    """The seed's side in a few words: "1.00 req/s", "more than 10,000", "4.6×", "winner"."""
    theirs = claim.get("theirs", claim.get("bound"))
    n, k = len(claim.ranked), len(claim.servers)
    if claim.kind in ("winner", "last"):
        end = "best" if claim.kind == "winner" else "worst"
        margin = f", by {claim.get('margin'):g}× at least" if claim.get("margin") else ""
        return (f"the {end} {k} of {n}" if k > 1 else f"the {end} of {n}") + margin
    if claim.kind == "order":
        return "in the order named, best first"
    words = _kind_words(claim)
    if words:
        return words
    if claim.metric == "keep_alive":  # a behaviour, found or not
        return "keeps a connection: yes" if claim.kind == "at_least" else "keeps a connection: no"
    if claim.kind == "position":
        place = claim.get("position")
        at = f"places {place[0]}–{place[1]}" if isinstance(place, list) else f"place {place}"
        return f"{at} of {n}"
    if isinstance(theirs, list):
        text = f"{theirs[0]:g}–{theirs[1]:g}×"
    elif theirs is None:
        text = claim.kind.replace("_", " ")
    elif claim.kind == "ratio":
        text = f"{float(theirs):g}×"
    else:
        side = {"at_most": "at most ", "at_least": "at least "}.get(claim.kind, "")
        if claim.get("strict"):
            side = {"at_most": "below ", "at_least": "more than "}[claim.kind]
        text = side + fmt(claim.metric, float(theirs))
    return text


def _kind_words(claim: Claim) -> str:
    """The claim's assertion in a few words, for the kinds with no single figure."""
    tol = f"{float(claim.get('tolerance', 0.25)):.0%}"
    if claim.kind == "error_onset":
        frm = claim.get("from_level")
        edge = f"from {frm:g}" if frm is not None else f"past {claim.get('above'):g}"
        share = claim.get("threshold")
        return f"errors {edge}" + (f" (over {share:.0%})" if share else "") + ", none before"
    if claim.kind == "jump":
        return f"at least {claim.get('factor'):g}× past {claim.get('above'):g}"
    return {
        "no_errors": "no errors",
        "steady": f"steady within {tol}",
        "rises": f"rising more than {tol}",
        "falls": f"falling more than {tol}",
        "no_fall": f"never more than {tol} below the first level",
        "alike": f"within {tol} of each other",
    }.get(claim.kind, "")


def dead(claim: Claim, p: Point) -> bool:
    """A failed cell with nothing stored for the claim to read (no repeat was kept)."""
    return p.failed is not None and p.values.get(value_key(claim)) is None


def setting_changes(claim: Claim, seed: SeedClaims, run: RunView, load: str) -> list[str]:
    """The seed's settings this claim depends on that the run changed, each said in words."""
    setup, ran, out = seed.setup, run.settings, []
    for what in claim.get("depends", []):
        if what == "cpus" and "server_cpus" in setup and ran.get("server_cpus") is not None:
            if int(ran["server_cpus"]) != int(setup["server_cpus"]):
                out.append(
                    f"the servers had {ran['server_cpus']} CPU(s) here, {setup['server_cpus']} "
                    "in the seed"
                )
        elif what == "duration" and "duration_s" in setup:
            here = (ran.get("durations") or {}).get(load)
            if here is not None and float(here) != float(setup["duration_s"]):
                out.append(f"{here:g} s per repeat here, {setup['duration_s']:g} s in the seed")
        elif what == "app_env":
            env = ran.get("app_env") or {}
            for k, v in (setup.get("app_env") or {}).items():
                if str(env.get(k, v)) != str(v):
                    out.append(f"{k}={env.get(k)} here, {v} in the seed")
        elif what == "requests" and "requests" in setup:
            here = (ran.get("requests") or {}).get(load)
            if here is not None and int(here) != int(setup["requests"]):
                out.append(f"{here} requests per test here, {setup['requests']} in the seed")
        elif what == "memory" and "memory_limit_mb" in setup:
            if ran.get("memory_limit_mb") != setup["memory_limit_mb"]:
                out.append(
                    f"memory limit {ran.get('memory_limit_mb')} MB here, "
                    f"{setup['memory_limit_mb']} MB in the seed"
                )
    return out


def chosen_levels(claim: Claim, points: list[Point]) -> list[Point]:
    """The points at the levels a claim speaks of (level, min_level, max_level), by level."""
    out = sorted(points, key=lambda p: p.level)
    if claim.get("level") is not None:
        out = [p for p in out if p.level == float(claim.get("level"))]
    if claim.get("min_level") is not None:
        out = [p for p in out if p.level >= float(claim.get("min_level"))]
    if claim.get("max_level") is not None:
        out = [p for p in out if p.level <= float(claim.get("max_level"))]
    return out


def usable(claim: Claim, points: list[Point], server: str) -> tuple[list[Point], list[str]]:
    """The points a claim may rest on, and why each other one was left out. A failed cell is
    evidence for an error claim (the server stopped answering) and left out of any other."""
    errors = claim.kind in ERROR_KINDS or claim.metric in ERROR_METRICS
    kept, left = [], []
    for p in points:
        if p.untrusted:
            left.append(f"{server} at {p.level:g}: {p.untrusted}")
        elif claim.metric in p.doubts:
            left.append(f"{server} at {p.level:g}: {p.doubts[claim.metric]}")
        elif p.failed and not errors:
            left.append(f"{server} at {p.level:g}: {p.failed}")
        elif not p.failed and p.values.get(value_key(claim)) is None and not errors:
            left.append(f"{server} at {p.level:g}: no {claim.metric} recorded")
        else:
            kept.append(p)
    return kept, left
