"""`wsgibench compare A B`: per-cell throughput and latency changes between two stores, tested for significance."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from rich.console import Console
from rich.table import Table

from ._environment import machine_key
from ._errors import UsageError
from ._store import Store
from .report._significance import ALPHA, Verdict, compare_samples

METRICS = (("rps_ok", "throughput", True), ("latency_p50_us", "p50", False),
           ("latency_p99_us", "p99", False))
METHOD_NOTE = (f"Mann-Whitney U (exact, two-sided, alpha {ALPHA:g}) over the repeats; when there are "
               "too few repeats for that test to reach alpha (3 vs 3: smallest p is 0.1) a change "
               "counts only if the min-max ranges of the repeats do not overlap.")


@dataclass
class Side:
    path: str
    study_id: int
    name: str
    date: str
    environment: dict[str, Any]

    def describe(self) -> str:
        return f"{self.path} study #{self.study_id} \"{self.name}\" ({self.date})"


@dataclass
class CellChange:
    server: str
    load: str
    level: float
    status_a: str | None  # None: no such cell in A
    status_b: str | None
    cell_a: int | None
    cell_b: int | None
    repeats_a: list[int] = field(default_factory=list)
    repeats_b: list[int] = field(default_factory=list)
    version_a: str | None = None
    version_b: str | None = None
    verdicts: dict[str, Verdict] = field(default_factory=dict)

    @property
    def outcome(self) -> str:
        text = self._outcome()
        odd = [f"{side} {status}" for side, status in (("A", self.status_a), ("B", self.status_b))
               if status not in (None, "measured")]
        return text + (f" [{', '.join(odd)}]" if odd and "rps_ok" in self.verdicts else "")

    def _outcome(self) -> str:
        if self.status_a is None or self.status_b is None:
            return "only in A" if self.status_b is None else "only in B"
        if "rps_ok" not in self.verdicts:
            return f"not comparable (A {self.status_a}, B {self.status_b})"
        better, worse = [], []
        for metric, label, higher in METRICS:
            v = self.verdicts.get(metric)
            if v and v.significant and v.change is not None and v.change != 0:
                (better if (v.change > 0) == higher else worse).append(label)
        if better and worse:
            return f"mixed: better {', '.join(better)}; worse {', '.join(worse)}"
        if better:
            return "faster (" + ", ".join(better) + ")"
        if worse:
            return "slower (" + ", ".join(worse) + ")"
        return "no significant change"


@dataclass
class Comparison:
    a: Side
    b: Side
    differences: list[str]  # metadata that differ (only non-empty when forced)
    cells: list[CellChange]


def comparable_metadata(env: dict[str, Any]) -> dict[str, Any]:
    """What must match: the machine (pyperf-style) and the engine that measured."""
    engine = env.get("engine") or {}
    return {**machine_key(env), "engine_version": engine.get("engine_version")}


def metadata_differences(env_a: dict[str, Any], env_b: dict[str, Any]) -> list[str]:
    a, b = comparable_metadata(env_a), comparable_metadata(env_b)
    return [f"{k} {a[k]!r} vs {b[k]!r}" for k in a if a[k] != b.get(k)]


def _side(store: Store, study_id: int | None) -> Side:
    row = store.study(study_id)
    date = datetime.fromtimestamp(row["started_unix_s"], timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return Side(str(store.path), row["id"], row["name"], date, json.loads(row["environment_json"]))


def _cells(store: Store, study_id: int) -> dict[tuple[str, str, float], tuple[Any, list]]:
    return {(c.server, c.load, c.level): (c, store.repeats(c.id)) for c in store.cells(study_id)}


def compare_stores(store_a: Store, store_b: Store, study_a: int | None = None,
                   study_b: int | None = None, force: bool = False) -> Comparison:
    a, b = _side(store_a, study_a), _side(store_b, study_b)
    differences = metadata_differences(a.environment, b.environment)
    if differences and not force:
        raise UsageError("refusing to compare results from different machines or engine versions: "
                         + "; ".join(differences) + " (use --force to compare anyway)")
    cells_a, cells_b = _cells(store_a, a.study_id), _cells(store_b, b.study_id)
    changes = []
    for key in sorted(set(cells_a) | set(cells_b), key=lambda k: (k[1], k[0], k[2])):
        ca, reps_a = cells_a.get(key, (None, []))
        cb, reps_b = cells_b.get(key, (None, []))
        change = CellChange(
            key[0], key[1], key[2], ca.status if ca else None, cb.status if cb else None,
            ca.id if ca else None, cb.id if cb else None, [r["id"] for r in reps_a],
            [r["id"] for r in reps_b], ((ca and ca.server_info) or {}).get("version"),
            ((cb and cb.server_info) or {}).get("version"))
        for metric, _, _ in METRICS:
            va = [r[metric] for r in reps_a if r[metric] is not None]
            vb = [r[metric] for r in reps_b if r[metric] is not None]
            if va and vb:
                change.verdicts[metric] = compare_samples(va, vb)
        changes.append(change)
    return Comparison(a, b, differences, changes)


# -- output ------------------------------------------------------------------------------------

def _num(metric: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if metric == "rps_ok" else f"{value / 1000:.3f}"


def _p(v: Verdict | None) -> str:
    return "-" if v is None or v.p_value is None else f"{v.p_value:.3f}"


def _row(c: CellChange) -> list[str]:
    server = c.server
    if c.version_a != c.version_b:
        server += f" ({c.version_a or '-'} → {c.version_b or '-'})"
    out = [server, c.load, f"{c.level:g}"]
    for metric, _, _ in (METRICS[0], METRICS[2]):
        v = c.verdicts.get(metric)
        out += [_num(metric, v.median_a if v else None), _num(metric, v.median_b if v else None),
                v.change_pct if v else "-", _p(v)]
    out += [c.outcome, f"{c.cell_a or '-'} / {c.cell_b or '-'}"]
    return out


HEADERS = ["server", "load", "level", "req/s A", "req/s B", "change", "p", "p99 ms A", "p99 ms B",
           "change", "p", "verdict", "cell A / B"]


def print_table(result: Comparison, console: Console) -> None:
    console.print(f"[bold]A[/]: {result.a.describe()}", highlight=False)
    console.print(f"[bold]B[/]: {result.b.describe()}", highlight=False)
    if result.differences:
        console.print("[yellow]forced: the two differ in " + "; ".join(result.differences) + "[/]",
                      highlight=False)
    table = Table()
    for i, h in enumerate(HEADERS):
        table.add_column(h, justify="left" if i in (0, 1, 11, 12) else "right")
    for c in result.cells:
        row = _row(c)
        outcome = row[11]
        style = ("green" if outcome.startswith("faster") else "red" if outcome.startswith("slower")
                 else "yellow" if outcome.startswith("mixed") else None)
        if style:
            row[11] = f"[{style}]{outcome}[/]"
        table.add_row(*row)
    console.print(table)
    counts = summary_counts(result)
    console.print("summary: " + ", ".join(f"{n} {what}" for what, n in counts.items()), highlight=False)
    console.print(METHOD_NOTE, highlight=False)


def markdown(result: Comparison) -> str:
    lines = ["## wsgibench compare", "", f"- A: {result.a.describe()}", f"- B: {result.b.describe()}"]
    env = result.a.environment
    lines.append(f"- machine: {env.get('cpu_model')}, {env.get('cpu_count')} cores, "
                 f"kernel {env.get('kernel')}; engine "
                 f"{(env.get('engine') or {}).get('engine_version')}")
    if result.differences:
        lines.append("- **forced**: the two differ in " + "; ".join(result.differences))
    lines += ["", "| " + " | ".join(HEADERS) + " |",
              "|---|---|" + "---:|" * 9 + "---|---|"]
    for c in result.cells:
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in _row(c)) + " |")
    lines += ["", METHOD_NOTE, ""]
    return "\n".join(lines)


def summary_counts(result: Comparison) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in result.cells:
        key = c.outcome.split(" (")[0].split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    return counts


def median_ratio(result: Comparison, metric: str = "rps_ok") -> float | None:
    """Median over cells of B/A for a metric: a one-number summary (e.g. 0.5 = half the throughput)."""
    ratios = [v.median_b / v.median_a for c in result.cells
              if (v := c.verdicts.get(metric)) and v.median_a]
    return statistics.median(ratios) if ratios else None
