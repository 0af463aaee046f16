"""Read one stored study into what reports draw: study metadata, loads, and per-cell numbers with record ids."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wsgibench.baseline import BASELINE
from wsgibench.report import format as fmt
from wsgibench.results.calibration import Calibration, calibrations
from wsgibench.results.capacity_read import ServerCapacity, capacity_loads, read_capacities
from wsgibench.results.engine_plan import LEVEL_FIELDS
from wsgibench.results.repeat import StoredRepeat, start_of
from wsgibench.results.significance import grouped
from wsgibench.results.store import Cell, Store
from wsgibench.results.summary import CellSummary, placement_text, summarise_study
from wsgibench.results.tuning import TuneRecord, tuning_of

OPEN_MODELS = ("rate", "conn_rate", "sessions", "trace")
LEVEL_TITLES = {
    "speed": "speed (× the log's pace)",
    "connections": "connections (closed loop)",
    "rate": "offered load (new connections/s)",
    "users_per_s": "offered load (users/s)",
    "concurrency": "concurrency",
}


@dataclass
class StudyMeta:
    id: int
    name: str
    status: str
    started_unix_s: float
    environment: dict[str, Any]
    config: dict[str, Any]

    @property
    def date(self) -> str:
        return datetime.fromtimestamp(self.started_unix_s, UTC).strftime("%Y-%m-%d %H:%M UTC")

    def as_run(self) -> str:
        """The study as it was run (its levels, durations and repeats after the command line's
        changes), and those changes: a report's header never describes a run that did not happen."""
        cfg = self.config
        repeats, trim = cfg.get("repeats", 3), cfg.get("trim", 0)
        servers = cfg.get("servers", [])
        starts = min(int(cfg.get("starts", 1)), int(repeats))  # a store from before: one start
        parts = [
            f"{len(servers)} server{'s' if len(servers) != 1 else ''}, {repeats} "
            f"repeat{'s' if repeats != 1 else ''} per cell"
            + (f" over {starts} server starts" if starts > 1 else ", one server start")
            + (f" ({trim} dropped at each end)" if trim else "")
        ]
        parts += app_parts(cfg)
        for load in cfg.get("load", []):
            model = load.get("model", "?")
            if model == "capacity" or "slo_p99_ms" in load:  # rates (speeds) the search chose
                parts.append(_searched(load))
                continue
            if model == "replay":
                speeds = load.get("speed", 1)
                speeds = ", ".join(
                    f"{v:g}" for v in (speeds if isinstance(speeds, list) else [speeds])
                )
                parts.append(
                    f"{load.get('name', model)}: the log {load.get('log')} at speed {speeds}"
                )
                continue
            levels = ", ".join(f"{v:g}" for v in load.get("levels", []))
            what = (
                f"{load.get('name', model)}: {model} at {LEVEL_FIELDS.get(model, 'level')} {levels}"
            )
            if "duration_s" in load:
                what += f", {load['duration_s']:g} s"
            if "requests" in load:
                what += f", {load['requests']} requests"
            if "app" in load:  # a load of its own app (the frameworks study)
                what += f", app {load['app']}"
            parts.append(what)
        changed = cfg.get("command_line") or []
        text = "As run: " + "; ".join(parts) + "."
        return text + (f" Changed on the command line: {', '.join(changed)}." if changed else "")

    @property
    def engine_version(self) -> str | None:
        return (self.environment.get("engine") or {}).get("engine_version")

    @property
    def machine(self) -> str:
        env = self.environment
        return (
            f"{env.get('cpu_model', 'unknown CPU')}, {env.get('cpu_count', '?')} cores, "
            f"kernel {env.get('kernel', '?')}"
        )

    @property
    def versions(self) -> str:
        env = self.environment
        return (
            f"engine {self.engine_version or '?'}, wsgibench {env.get('wsgibench_version', '?')}, "
            f"python {env.get('python', '?')}"
        )

    def caption(self) -> list[str]:
        """The lines every chart and table carries."""
        return [f'study #{self.id} "{self.name}", {self.date}', self.machine, self.versions]


def app_parts(cfg: dict[str, Any]) -> list[str]:
    """The study's app when it is not pong (one's own: its spec, ASGI side and dependencies) and
    the requests it was sent with what made a reply valid: what a reader needs to run it again."""
    parts = []
    app, asgi = cfg.get("app", "pong"), cfg.get("app_asgi")
    if app != "pong":
        text = f"app {app}" + (f" (ASGI side {asgi})" if asgi else "")
        if "requirements" in cfg:
            text += f", its dependencies from {Path(str(cfg['requirements'])).name}"
        parts.append(text)
    if cfg.get("app_env"):
        parts.append("app settings " + ", ".join(f"{k}={v}" for k, v in cfg["app_env"].items()))
    if cfg.get("requests"):
        parts.append("requests " + ", ".join(_request_text(r) for r in cfg["requests"]))
    return parts


def _request_text(request: dict[str, Any]) -> str:
    """One request kind as a study file gives it: name, method and path, weight, its rule."""
    query = request.get("query")
    path = request.get("path", "/") + (
        "?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else ""
    )
    said = f"{request.get('name', path)}: {request.get('method', 'GET')} {path}"
    if request.get("weight", 1) != 1:
        said += f" × {request['weight']}"
    return said + (f" expecting {json.dumps(request['expect'])}" if request.get("expect") else "")


def _searched(load: dict[str, Any]) -> str:
    """A capacity load (or a replay's search of the speed) as run: its budget, where it started."""
    budget = [f"p99 ≤ {float(load.get('slo_p99_ms', 0)):g} ms"]
    if "slo_p50_ms" in load:
        budget.append(f"p50 ≤ {float(load['slo_p50_ms']):g} ms")
    if load.get("model") == "replay":
        return (
            f"{load.get('name', 'replay')}: the log {load.get('log')}, the highest speed within "
            f"{', '.join(budget)}{' for each kind' if load.get('slo_per_kind') else ''}, searched "
            f"from {float(load.get('speed', 1)):g}×"
        )
    what = (
        f"{load.get('name', 'capacity')}: capacity within {', '.join(budget)}, "
        f"rates searched from {load.get('start_rate', 100):g} "
        + (f"requests/s on {load['pool']} connections" if "pool" in load else "new connections/s")
    )
    return what + (f", {load['duration_s']:g} s" if "duration_s" in load else "")


@dataclass
class CellData:
    cell: Cell
    summary: CellSummary
    repeats: list[StoredRepeat]

    @property
    def label(self) -> str:
        v = self.summary.version
        named = "@" in self.cell.server  # a server at a release names its version already
        return f"{self.cell.server} {v}" if v and not named else self.cell.server

    @property
    def remarks(self) -> list[str]:
        """Notes and the harness's diagnoses of the cell (e.g. why a number is not to be trusted)."""
        diagnoses = [d.get("message", "") for d in getattr(self.cell, "diagnoses", None) or []]
        placed = placement_text(self.cell.isolation)
        return [
            n for n in [placed, fmt.kinds(self.summary.kinds), *self.cell.notes, *diagnoses] if n
        ]

    @property
    def repeat_ids(self) -> list[int]:
        return self.summary.repeat_ids

    def values(self, column: str) -> list[float]:
        return [float(v) for r in self.repeats if (v := r.column(column)) is not None]

    def starts(self, column: str) -> list[list[float]]:
        """A column's values per server start (a repeat's extra_json "start"; none: one start)."""
        return self.by_start(lambda r: r.column(column))

    def by_start(self, value: Callable[[StoredRepeat], float | None]) -> list[list[float]]:
        """Each repeat's value (None: left out), one list per server start, in start order."""
        return grouped((start_of(r), value(r)) for r in self.repeats)

    def median(self, column: str) -> float | None:
        vals = self.values(column)
        return statistics.median(vals) if vals else None

    def efficiency(self) -> list[float]:
        """Valid replies per CPU-second of the server process tree (its threads' CPU), one value
        per repeat."""
        return [v for r in self.repeats if (v := r.per_cpu_s) is not None]

    def cores(self) -> list[float]:
        """Cores the server used (CPU seconds per second), one value per repeat."""
        return [v for r in self.repeats if (v := r.cores_used) is not None]

    def threads_peak(self) -> int | None:
        """The most threads alive at once in the server's processes, over the repeats."""
        found = [int(t["threads_peak"]) for r in self.repeats if (t := r.threads)]
        return max(found) if found else None

    def error_classes(self) -> tuple[dict[str, int], int]:
        """Errors per class summed over the repeats, and the replies + errors they are a share of."""
        classes: dict[str, int] = {}
        attempts = 0
        for rep in self.repeats:
            totals = rep.engine.totals
            for name, count in totals.errors.items():
                classes[name] = classes.get(name, 0) + count
            attempts += totals.ok + totals.error_count
        return classes, attempts

    def representative(self) -> StoredRepeat | None:
        """The repeat with the median throughput (the lower middle for even counts)."""
        reps = [r for r in self.repeats if r.rps_ok is not None]
        if not reps:
            return None
        reps.sort(key=lambda r: r.rps_ok)
        return reps[(len(reps) - 1) // 2]


@dataclass
class LoadData:
    name: str
    model: str
    config: dict[str, Any]
    cells: list[CellData] = field(default_factory=list)

    @property
    def level_field(self) -> str:
        return LEVEL_FIELDS.get(self.model, "level")

    @property
    def level_title(self) -> str:
        if self.level_field == "rate" and "pool" in self.config:
            return f"offered load (requests/s on {self.config['pool']} connections)"
        return LEVEL_TITLES.get(self.level_field, self.level_field)

    @property
    def is_open(self) -> bool:
        return self.model in OPEN_MODELS

    @property
    def is_capacity(self) -> bool:
        """A capacity search's load: its cells are the search's steps and cost cells (a rate's,
        or a replay's speeds with a budget)."""
        model = self.config.get("model")
        return model == "capacity" or (model == "replay" and "slo_p99_ms" in self.config)

    @property
    def role(self) -> str | None:
        """What the study declared the load for (study/roles.py): framework, ceiling, broadcast
        or echo; a broadcast model's is broadcast; None: its servers ranked by req/s."""
        return "broadcast" if self.model == "broadcast" else self.config.get("role")

    @property
    def levels(self) -> list[float]:
        return sorted({c.cell.level for c in self.cells})

    def servers(self) -> list[str]:
        seen: dict[str, None] = {}
        for c in sorted(self.cells, key=lambda c: c.cell.server):
            seen.setdefault(c.cell.server, None)
        return list(seen)

    def describe(self) -> str:
        cfg = self.config
        bits = [
            f"model {self.model}",
            f"HTTP/{cfg.get('http', '1.1')}",
            "keep-alive"
            if cfg.get("keep_alive", cfg.get("http", "1.1") == "1.1")
            else "no keep-alive",
        ]
        for key in ("log", "duration_s", "calls", "arrival", "requests", "think_s", "pipeline"):
            if key in cfg:
                bits.append(f"{key} {cfg[key]}")
        return ", ".join(bits)


@dataclass
class ReportData:
    meta: StudyMeta
    loads: list[LoadData]
    sample_rows: dict[int, list[dict[str, Any]]]  # repeat id -> sampler rows (sessions charts)
    # Every study in the store (id, name, status, date), for the index of a store with several.
    studies: list[tuple[int, str, str, str]] = field(default_factory=list)
    # Per capacity load and server, what its search found (results/capacity_read.py).
    capacities: list[ServerCapacity] = field(default_factory=list)
    # The tuning this study was a round of (`wsgibench tune`), with its ranking and winner.
    tuning: TuneRecord | None = None
    # The A/A calibrations of this machine in the store (`wsgibench calibrate`), cited by claims.
    calibrations: list[Calibration] = field(default_factory=list)

    def capacities_of(self, load: str) -> list[ServerCapacity]:
        """A capacity load's servers, highest capacity first (none found: last)."""
        found = [c for c in self.capacities if c.load == load]
        return sorted(found, key=lambda c: (-(c.requests(c.result.capacity) or 0.0), c.server))

    def labels(self) -> list[str]:
        """Every server label of the study, baseline first, in a stable order (colours follow it)."""
        labels = sorted(
            {c.label for load in self.loads for c in load.cells},
            key=lambda label: (not label.startswith(BASELINE), label),
        )
        return labels


def load_report_data(store: Store, study_id: int | None = None) -> ReportData:
    row = store.study(study_id)
    config = json.loads(row["config_json"])
    meta = StudyMeta(
        row["id"],
        row["name"],
        row["status"],
        row["started_unix_s"],
        json.loads(row["environment_json"]),
        config,
    )
    trim = int(config.get("trim", 0))
    load_cfg = {
        load.get("name", load.get("model")): load
        for load in config.get("load", [])
        if isinstance(load, dict)
    }
    loads: dict[str, LoadData] = {}
    samples: dict[int, list[dict[str, Any]]] = {}
    for summary in summarise_study(store, meta.id, trim):
        cell = summary.cell
        repeats = store.stored_repeats(cell.id)
        load = loads.setdefault(
            cell.load, LoadData(cell.load, cell.model, load_cfg.get(cell.load, {}))
        )
        data = CellData(cell, summary, repeats)
        load.cells.append(data)
        if cell.model == "sessions":
            middle = data.representative()
            if middle is not None:
                samples[middle.id] = [dict(s) for s in store.samples(middle.id)]
    order = list(load_cfg)
    ordered = sorted(
        loads.values(), key=lambda load: order.index(load.name) if load.name in order else 99
    )
    studies = [
        (
            int(r["id"]),
            str(r["name"]),
            str(r["status"]),
            datetime.fromtimestamp(r["started_unix_s"], UTC).strftime("%Y-%m-%d %H:%M UTC"),
        )
        for r in store.studies()
    ]
    capacities = read_capacities(store, meta.id) if capacity_loads(config) else []
    return ReportData(
        meta,
        ordered,
        samples,
        studies,
        capacities,
        tuning_of(store, meta.id),
        calibrations(store, meta.environment),
    )
