"""Compare two stored studies cell by cell: throughput and latency changes, each tested on the server
starts (results/significance.py), the false discovery rate kept over every cell and metric, and
worded by the rule (improved, regressed, change within noise, no change detected, not tested)."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from wsgibench.errors import UsageError
from wsgibench.results.capacity_compare import (
    CapacityChange,
    capacity_load_names,
    compare_capacities,
)
from wsgibench.results.kind_compare import KindChange, kind_changes
from wsgibench.results.repeat import start_of
from wsgibench.results.significance import (
    ALPHA,
    MIN_STARTS,
    NOISE,
    Verdict,
    adjusted,
    compare_starts,
    grouped,
    method,
    word,
)
from wsgibench.results.store import Store
from wsgibench.results.verdict import CellStatus

# Diagnoses that make a verdict rest on a number that may not be the server's.
FLAGGED = ("contended", "engine-saturated", "littles-law", "worker-deaths", "many-resends")
METRICS = (
    ("rps_ok", "throughput", True),
    ("latency_p50_us", "p50", False),
    ("latency_p99_us", "p99", False),
)


def method_note(result: Comparison) -> str:
    """How the verdicts were reached, with the server starts the two stores really have."""
    counts = {
        side: sorted(
            {
                getattr(v, f"n_{side.lower()}")
                for c in result.cells
                if c.matched and (v := c.verdicts.get("rps_ok"))
            }
        )
        for side in ("A", "B")
    }
    have = "; ".join(
        f"{side} {'–'.join(str(n) for n in sorted({ns[0], ns[-1]}))}"
        for side, ns in counts.items()
        if ns
    )
    tests = sum(len(c.adjusted) for c in result.cells)
    return (
        f"Server starts per cell: {have or 'none matched'}. Each metric of each cell: "
        f"{method(MIN_STARTS, MIN_STARTS, ALPHA).replace(f'{MIN_STARTS} vs {MIN_STARTS}', 'the')}"
        f"; p is Benjamini–Hochberg adjusted over the {tests} tests of this comparison (every "
        f"cell and metric), the false discovery rate kept at {ALPHA:g}. Improved or regressed: "
        f"adjusted p below {ALPHA:g} and a change of at least {NOISE:.0%}; a smaller one is a "
        "change within noise; with fewer than 2 starts on a side nothing is tested (not tested, "
        "the change given by value)."
    )


def outcome_of(verdicts: dict[str, Verdict], adjusted: dict[str, float]) -> str:
    """A cell's verdict over its metrics (METRICS), in the words of `metric_word`."""
    if not verdicts["rps_ok"].testable:
        changes = ", ".join(
            f"{label} {v.change_pct}"
            for metric, label, _ in METRICS
            if (v := verdicts.get(metric)) is not None
        )
        return f"not tested: {changes} by value ({verdicts['rps_ok'].method})"
    words = {
        label: word(v, adjusted.get(metric), higher)
        for metric, label, higher in METRICS
        if (v := verdicts.get(metric)) is not None
    }
    better = [label for label, w in words.items() if w == "improved"]
    worse = [label for label, w in words.items() if w == "regressed"]
    if better and worse:
        return f"mixed: improved {', '.join(better)}; regressed {', '.join(worse)}"
    if better or worse:
        return f"{'improved' if better else 'regressed'} ({', '.join(better or worse)})"
    if "change within noise" in words.values():
        return "change within noise"
    return "no change detected"


def adjust(cells: list[CellChange]) -> None:
    """Every tested metric of every cell, Benjamini–Hochberg adjusted together (`adjusted`)."""
    tested = [
        (c, metric, v.p_value)
        for c in cells
        for metric, v in c.verdicts.items()
        if v.testable and v.p_value is not None
    ]
    for (c, metric, _), p in zip(tested, adjusted([p for _, _, p in tested]), strict=True):
        c.adjusted[metric] = p


@dataclass
class Side:
    path: str
    study_id: int
    name: str
    date: str
    environment: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)  # the study as run

    def describe(self) -> str:
        return f'{self.path} study #{self.study_id} "{self.name}" ({self.date})'


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
    # Each tested metric's p, Benjamini–Hochberg adjusted over the whole comparison (`adjust`).
    adjusted: dict[str, float] = field(default_factory=dict)
    # Diagnoses of either side that change what its numbers mean (contended, disputed, ...).
    flags_a: list[str] = field(default_factory=list)
    flags_b: list[str] = field(default_factory=list)
    # Packages of the server's venv that differ between A and B ("name 1.0 → 1.1").
    package_changes: list[str] = field(default_factory=list)

    @property
    def matched(self) -> bool:
        return self.status_a is not None and self.status_b is not None

    @property
    def outcome(self) -> str:
        """The verdict, and what it rests on when a side is not a plain measured cell."""
        text = self._outcome()
        odd = [
            f"{side} {what}"
            for side, status, flags in (
                ("A", self.status_a, self.flags_a),
                ("B", self.status_b, self.flags_b),
            )
            for what in ([status] if status not in (None, CellStatus.MEASURED) else []) + flags
        ]
        return text + (f" [{', '.join(odd)}]" if odd and "rps_ok" in self.verdicts else "")

    def _outcome(self) -> str:
        if self.status_a is None or self.status_b is None:
            return "only in A" if self.status_b is None else "only in B"
        if "rps_ok" not in self.verdicts:
            return f"not comparable (A {self.status_a}, B {self.status_b})"
        return outcome_of(self.verdicts, self.adjusted)


@dataclass
class Comparison:
    a: Side
    b: Side
    differences: list[str]  # metadata that differ (only non-empty when forced)
    # What the two served, where it differs (the app, its ASGI side, its request mix): their
    # changes are then between apps, not a server's.
    cells: list[CellChange]  # the cells of every load but the capacity loads
    # Per capacity load and server: its capacity in A and B (its steps are not compared by level).
    capacities: list[CapacityChange] = field(default_factory=list)
    served: list[str] = field(default_factory=list)
    # Per request kind of the matched cells whose load has several kinds.
    kinds: list[KindChange] = field(default_factory=list)


def machine_key(env: dict[str, Any]) -> dict[str, Any]:
    """The metadata that must match for two stores to be comparable."""
    return {k: env.get(k) for k in ("cpu_model", "cpu_count", "kernel", "memory_bytes")}


def comparable_metadata(env: dict[str, Any]) -> dict[str, Any]:
    """What must match: the machine (pyperf-style) and the engine that measured."""
    engine = env.get("engine") or {}
    return {**machine_key(env), "engine_version": engine.get("engine_version")}


def metadata_differences(env_a: dict[str, Any], env_b: dict[str, Any]) -> list[str]:
    a, b = comparable_metadata(env_a), comparable_metadata(env_b)
    return [f"{k} {a[k]!r} vs {b[k]!r}" for k in a if a[k] != b.get(k)]


def _side(store: Store, study_id: int | None) -> Side:
    row = store.study(study_id)
    date = datetime.fromtimestamp(row["started_unix_s"], UTC).strftime("%Y-%m-%d %H:%M UTC")
    config = json.loads(row["config_json"] or "{}")
    return Side(
        str(store.path), row["id"], row["name"], date, json.loads(row["environment_json"]), config
    )


def _cells(store: Store, study_id: int) -> dict[tuple[str, str, float], tuple[Any, list[Any]]]:
    """The cells by server, load and level; a capacity load's steps are left to its capacity."""
    searched = capacity_load_names(store, study_id)
    return {
        (c.server, c.load, c.level): (c, store.stored_repeats(c.id))
        for c in store.cells(study_id)
        if c.load not in searched
    }


def runs_to_compare(
    store_a: Store, store_b: Store, study_a: int | None, study_b: int | None
) -> tuple[int | None, int | None]:
    """The two runs the command line means: each store's latest unless named; within one store,
    B's run (its latest) against the run of the same study before it, never a run against itself
    unless both are named."""
    same = store_a.path.resolve() == store_b.path.resolve()
    if not same or (study_a is not None and study_b is not None):
        return study_a, study_b
    b = store_b.study(study_b)
    if study_a is None:
        study_a = store_a.run_before(b["id"], b["name"])
        if study_a is None:
            raise UsageError(
                f"{store_b.path} holds no run of {b['name']!r} before study {b['id']} to compare "
                "it with: name another store, or a study of this one with --study-a"
            )
    if study_a == b["id"]:
        raise UsageError(f"A and B are the same run (study {study_a} of {store_a.path})")
    return study_a, b["id"]


def compare_stores(
    store_a: Store,
    store_b: Store,
    study_a: int | None = None,
    study_b: int | None = None,
    force: bool = False,
) -> Comparison:
    a, b = _side(store_a, study_a), _side(store_b, study_b)
    differences = metadata_differences(a.environment, b.environment)
    if differences and not force:
        raise UsageError(
            "refusing to compare results from different machines or engine versions: "
            + "; ".join(differences)
            + " (use --force to compare anyway)"
        )
    cells_a, cells_b = _cells(store_a, a.study_id), _cells(store_b, b.study_id)
    changes = []
    for key in sorted(set(cells_a) | set(cells_b), key=lambda k: (k[1], k[0], k[2])):
        ca, reps_a = cells_a.get(key, (None, []))
        cb, reps_b = cells_b.get(key, (None, []))
        change = CellChange(
            key[0],
            key[1],
            key[2],
            ca.status if ca else None,
            cb.status if cb else None,
            ca.id if ca else None,
            cb.id if cb else None,
            [r.id for r in reps_a],
            [r.id for r in reps_b],
            ((ca and ca.server_info) or {}).get("version"),
            ((cb and cb.server_info) or {}).get("version"),
            flags_a=_flags(ca),
            flags_b=_flags(cb),
            package_changes=_package_changes(ca, cb),
        )
        for metric, _, _ in METRICS:
            va = grouped((start_of(r), r.column(metric)) for r in reps_a)
            vb = grouped((start_of(r), r.column(metric)) for r in reps_b)
            if va and vb:
                change.verdicts[metric] = compare_starts(va, vb)
        changes.append(change)
    adjust(changes)
    capacities = compare_capacities(store_a, a.study_id, store_b, b.study_id)
    matched = [
        (c.server, c.load, c.level, a_id, b_id)
        for c in changes
        if (a_id := c.cell_a) is not None and (b_id := c.cell_b) is not None
    ]
    kinds = kind_changes(store_a, store_b, matched)
    return Comparison(a, b, differences, changes, capacities, served_differences(a, b), kinds)


def request_mix(config: dict[str, Any]) -> str | None:
    """A study's own request mix as run (`GET /slow + GET /fast`); None: the app's own."""
    given = config.get("requests") or []
    return " + ".join(f"{r.get('method', 'GET')} {r.get('path', '/')}" for r in given) or None


def served_differences(a: Side, b: Side) -> list[str]:
    """What the two runs served, where it differs: `app 'pong' → 'mine:app'`; two studies
    (their cells matched by server, load and level may differ in anything else they set)."""
    found = [f"study {a.name!r} → {b.name!r}"] if a.name != b.name else []
    for what, key, default in (("app", "app", "pong"), ("ASGI side", "app_asgi", None)):
        va, vb = a.config.get(key, default), b.config.get(key, default)
        if va != vb:
            found.append(f"{what} {va!r} → {vb!r}")
    own = "the app's own"
    ra, rb = request_mix(a.config) or own, request_mix(b.config) or own
    if ra != rb:
        found.append(f"requests {ra} → {rb}")
    return found


def _package_changes(a: Any, b: Any) -> list[str]:
    """Every package of the server's venv and of the app's dependencies whose version differs
    between the two cells, and the app's lock when its hash differs."""
    if a is None or b is None:
        return []
    found = []
    for side in ("server", "app"):
        ia = (a.server_info or {}) if side == "server" else (a.server_info or {}).get("app") or {}
        ib = (b.server_info or {}) if side == "server" else (b.server_info or {}).get("app") or {}
        pa, pb = ia.get("packages") or {}, ib.get("packages") or {}
        prefix = "app: " if side == "app" else ""
        found += [
            f"{prefix}{name} {pa.get(name, '-')} → {pb.get(name, '-')}"
            for name in sorted(set(pa) | set(pb))
            if pa.get(name) != pb.get(name)
        ]
        la, lb = ia.get("lock_sha256"), ib.get("lock_sha256")
        if side == "app" and la != lb:
            found.append(
                f"app {ib.get('name') or ia.get('name')}: lock {_short(la)} → {_short(lb)}"
            )
    return found


def _short(digest: str | None) -> str:
    return digest[:12] if digest else "none"


def package_differences(result: Comparison) -> dict[str, list[str]]:
    """Per server, the packages that differ between A and B (servers with none left out)."""
    found: dict[str, list[str]] = {}
    for c in result.cells:
        if c.package_changes:
            found.setdefault(c.server, c.package_changes)
    return found


def _flags(cell: Any) -> list[str]:
    """The diagnoses of a cell that a verdict resting on it must name."""
    if cell is None:
        return []
    codes = {d.get("code") for d in cell.diagnoses or []}
    return [code for code in FLAGGED if code in codes]


def summary_counts(result: Comparison) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in result.cells:
        key = c.outcome.split(" (")[0].split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    return counts


def median_ratio(result: Comparison, metric: str = "rps_ok") -> float | None:
    """Median over cells of B/A for a metric: a one-number summary (e.g. 0.5 = half the throughput)."""
    ratios = [
        v.median_b / v.median_a
        for c in result.cells
        if (v := c.verdicts.get(metric)) and v.median_a
    ]
    return statistics.median(ratios) if ratios else None
