"""Many stores read as a history: every run (a study in a store) grouped by what makes runs
comparable (the machine and the engine, as `compare` requires; other groups are kept apart and
named), and per cell key (study, what it served, server, load, level) a timeline of the runs'
req/s and p99 repeats, ordered by run time or by the server's version, with the change points
found in it
(results/changepoint.py: the false discovery rate kept over every series of a group). A run whose
cell was not measured (invalid, disqualified, ...) or was contended (other work took the CPUs) is
a point of the timeline, left out of the search for changes, and said so. Capacity loads are left
out: their steps sit at rates each search chose, so a level is no key across runs."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from wsgibench.errors import UsageError
from wsgibench.results.capacity_read import capacity_loads
from wsgibench.results.changepoint import ALPHA, MIN_STEP, Change, study_changes
from wsgibench.results.compare import comparable_metadata, request_mix
from wsgibench.results.store import Store
from wsgibench.results.verdict import CellStatus
from wsgibench.servers.versions import split

ORDERS = ("time", "version")


@dataclass(frozen=True)
class Run:
    store: Path
    study_id: int
    study: str
    started_unix_s: float
    group: tuple[tuple[str, Any], ...]  # what must match for runs to be compared

    @property
    def when(self) -> str:
        return datetime.fromtimestamp(self.started_unix_s, UTC).strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class Point:
    """One run of one cell key: its repeats' req/s and p99 (µs), when it was measured."""

    run: Run
    status: str
    version: str | None
    rps: tuple[float, ...]
    p99_us: tuple[float, ...]
    contended: bool = False  # other work took the CPUs (a "contended" status or diagnosis)

    @property
    def rps_median(self) -> float | None:
        return statistics.median(self.rps) if self.rps else None

    @property
    def p99_median_ms(self) -> float | None:
        return statistics.median(self.p99_us) / 1000 if self.p99_us else None


@dataclass
class Timeline:
    server: str
    load: str
    level: float
    points: list[Point]
    rps_changes: list[Change] = field(default_factory=list)
    p99_changes: list[Change] = field(default_factory=list)
    study: str = ""
    served: str = "pong"  # what its runs served (served()): another app is another timeline

    @property
    def series(self) -> str:
        """The timeline among its server's: load, level, and the study and what it served."""
        what = f"{self.study}, {self.served}" if self.served != "pong" else self.study
        return f"{self.load} @{self.level:g}" + (f" ({what})" if what else "")

    @property
    def key(self) -> str:
        return f"{self.server} {self.series}"

    def measured(self) -> list[Point]:
        """The points a change can be read from: measured, not contended, with repeats."""
        return [
            p for p in self.points if p.status == CellStatus.MEASURED and p.rps and not p.contended
        ]

    def left_out(self) -> str:
        """The runs left out of the search for changes, and why, in a few words ("" if none)."""
        why: dict[str, int] = {}
        for p in self.points:
            if p not in self.measured():
                reason = "contended" if p.contended else str(p.status)
                why[reason] = why.get(reason, 0) + 1
        return ", ".join(f"{n} {reason}" for reason, n in why.items())


def served(config: dict[str, Any]) -> str:
    """What a run served besides its servers, as its study says: the app, its ASGI side and its
    request mix. A step between runs that served different apps (`run quick`, then `run quick
    --app mine:app`) is no regression of a server. The app's code and settings (app_env) are not
    part of it: a step where they changed is what a history is for."""
    parts = [str(config.get("app", "pong"))]
    if config.get("app_asgi"):
        parts.append(f"ASGI {config['app_asgi']}")
    mix = request_mix(config)
    return "; ".join([*parts, mix] if mix else parts)


@dataclass
class Group:
    """Runs that can be compared: one machine and one engine."""

    metadata: dict[str, Any]
    runs: list[Run]
    timelines: list[Timeline]

    @property
    def label(self) -> str:
        m = self.metadata
        memory = (m.get("memory_bytes") or 0) / 2**30
        return (
            f"{m.get('cpu_model')} ×{m.get('cpu_count')}, {memory:.0f} GiB, kernel "
            f"{m.get('kernel')}, engine {m.get('engine_version')}"
        )


def store_paths(paths: Iterable[Path]) -> list[Path]:
    """Stores named, and every *.sqlite below a folder named."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += sorted(path.rglob("*.sqlite"))
        elif path.exists():
            out.append(path)
        else:
            raise UsageError(f"history: no store or folder at {path}")
    if not out:
        raise UsageError("history: no *.sqlite store in " + ", ".join(str(p) for p in paths))
    return out


def names_in(paths: Iterable[Path], study: str | None = None) -> tuple[set[str], set[str]]:
    """The studies of the stores' finished (or incomplete) runs, and the servers of their cells
    (of `study`'s runs only, when given; a release's base name too): what --study and --server
    may name."""
    studies: set[str] = set()
    servers: set[str] = set()
    for path in store_paths(paths):
        store = Store(path, create=False, read_only=True)
        for row in store.studies():
            if row["status"] not in ("finished", "incomplete"):
                continue
            studies.add(row["name"])
            if study in (None, row["name"]):
                for cell in store.cells(int(row["id"])):
                    servers |= {cell.server, split(cell.server)[0]}
        store.close()
    return studies, servers


def read_history(
    paths: Iterable[Path],
    study: str | None = None,
    server: str | None = None,
    order: str = "time",
    alpha: float = ALPHA,
    min_step: float = MIN_STEP,
) -> list[Group]:
    """Every finished (or incomplete) run in the stores, grouped, each cell key's timeline in
    order with its change points."""
    if order not in ORDERS:
        raise UsageError(f"history: --order is one of {', '.join(ORDERS)}, not {order!r}")
    groups: dict[tuple[tuple[str, Any], ...], Group] = {}
    for path in store_paths(paths):
        store = Store(path, create=False, read_only=True)
        for row in store.studies():
            if row["status"] not in ("finished", "incomplete"):
                continue
            if study is not None and row["name"] != study:
                continue
            env = json.loads(row["environment_json"] or "{}")
            metadata = comparable_metadata(env)
            key = tuple(sorted(metadata.items()))
            run = Run(path, int(row["id"]), row["name"], float(row["started_unix_s"]), key)
            group = groups.setdefault(key, Group(metadata, [], []))
            group.runs.append(run)
            config = json.loads(row["config_json"] or "{}")
            _add_points(store, run, config, server, group, by_version=order == "version")
        store.close()
    for group in groups.values():
        group.runs.sort(key=lambda r: r.started_unix_s)
        for timeline in group.timelines:
            timeline.points.sort(key=_order_key(order))
        _find_changes(group.timelines, alpha, min_step)
    return list(groups.values())


def _find_changes(timelines: list[Timeline], alpha: float, min_step: float) -> None:
    """Every timeline's req/s and p99 series searched together, the false discovery rate kept
    at `alpha` over all of them (changepoint.study_changes)."""
    every = [
        [list(p.rps) if metric == "rps" else list(p.p99_us) for p in t.measured()]
        for t in timelines
        for metric in ("rps", "p99")
    ]
    found = study_changes(every, alpha, min_step)
    for i, timeline in enumerate(timelines):
        timeline.rps_changes, timeline.p99_changes = found[2 * i], found[2 * i + 1]


def _add_points(
    store: Store,
    run: Run,
    config: dict[str, Any],
    server: str | None,
    group: Group,
    by_version: bool,
) -> None:
    """The run's cells as points of their timelines; by version, a server at a release
    (`gunicorn-gthread@19.9.0`) is a point of its server's timeline."""
    searched = capacity_loads(config)
    what = served(config)
    index = {(t.study, t.served, t.server, t.load, t.level): t for t in group.timelines}
    for cell in store.cells(run.study_id):
        name = split(cell.server)[0] if by_version else cell.server
        if cell.load in searched or server not in (None, name, cell.server):
            continue
        repeats = store.stored_repeats(cell.id)
        point = Point(
            run,
            str(cell.status),
            (cell.server_info or {}).get("version") or split(cell.server)[1],
            tuple(r.rps_ok for r in repeats if r.rps_ok is not None),
            tuple(r.latency_p99_us for r in repeats if r.latency_p99_us is not None),
            _contended(cell),
        )
        key = (run.study, what, name, cell.load, cell.level)
        if key not in index:
            index[key] = Timeline(name, cell.load, cell.level, [], study=run.study, served=what)
            group.timelines.append(index[key])
        index[key].points.append(point)


def _contended(cell: Any) -> bool:
    """The cell's status or a diagnosis says other work took its CPUs."""
    codes = {d.get("code") for d in cell.diagnoses or []}
    return str(cell.status) == "contended" or "contended" in codes


def _order_key(order: str):  # type: ignore[no-untyped-def]
    def by_time(p: Point) -> tuple[float]:
        return (p.run.started_unix_s,)

    def by_version(p: Point) -> tuple[int, Version | str, float]:
        try:
            return (0, Version(p.version or ""), p.run.started_unix_s)
        except InvalidVersion:
            return (1, p.version or "", p.run.started_unix_s)

    return by_version if order == "version" else by_time
