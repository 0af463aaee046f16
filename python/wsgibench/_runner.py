"""Run a study: plan the cells, start a fresh server per cell, warm up, measure repeats, store each cell."""

from __future__ import annotations

import json
import random
import shutil
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from . import _checks, _databases, _diagnose, _doctor, _engine, _environment, _envs, _netstat
from ._apps import get_app
from ._errors import EngineError, StartupError
from ._isolation import available_cpus, split_cpus
from ._loads import Load
from ._paths import APPS_DIR
from ._process import STOP_GRACE_S
from ._sampler import Sampler
from ._serve import ServeOptions, availability, start
from ._store import Store
from ._studies import Study
from .servers import Flavour, ServerRecipe, get


@dataclass(frozen=True)
class CellPlan:
    position: int
    server: str
    load: Load
    level: float


def plan_cells(study: Study) -> list[CellPlan]:
    """Loads in order, levels ascending, servers shuffled within each level (seed 004)."""
    rng = random.Random(study.seed)
    cells: list[CellPlan] = []
    for load in study.loads:
        for level in sorted(load.levels):
            servers = list(study.servers)
            if study.random_order:
                rng.shuffle(servers)
            cells.extend(CellPlan(len(cells) + i, s, load, level) for i, s in enumerate(servers))
    return cells


@dataclass
class CellOutcome:
    status: str = "measured"  # measured | invalid | disqualified | unavailable | failed
    reason: str | None = None
    notes: list[str] = field(default_factory=list)
    capabilities: dict | None = None
    repeats: list[dict[str, Any]] = field(default_factory=list)
    diagnoses: list[dict[str, Any]] = field(default_factory=list)

    def disqualify(self, reason: str) -> None:
        self.status, self.reason = "disqualified", reason


def _errors(totals: dict[str, Any]) -> int:
    return int(sum(totals.get("errors", {}).values()))


def repeat_record(idx: int, result: dict[str, Any], sampler: Sampler) -> dict[str, Any]:
    """One stored repeat: headline numbers from the engine and the sampler, plus both in full."""
    totals = result["totals"]
    ok, errors = int(totals["ok"]), _errors(totals)
    kind = result["kinds"][0]["latency_us"] if result.get("kinds") else {}
    samples = sampler.samples
    inner = samples[1:-1] or samples  # start/end samples carry no CPU interval of the load
    rss = [s.rss_bytes for s in samples]
    conns = [s.conns for s in samples if s.conns is not None]
    cpu = [s.cpu_pct for s in inner]
    return {
        "idx": idx,
        "rps_ok": ok / result["elapsed_s"] if result.get("elapsed_s") else 0.0,
        "requests": int(totals["requests_sent"]), "ok": ok, "errors": errors,
        "error_rate": errors / (ok + errors) if ok + errors else 0.0,
        "latency_p50_us": kind.get("p50"), "latency_p90_us": kind.get("p90"),
        "latency_p99_us": kind.get("p99"), "latency_max_us": kind.get("max"),
        "cpu_mean_pct": sum(cpu) / len(cpu) if cpu else None,
        "cpu_peak_pct": max(cpu) if cpu else None,
        "rss_start_bytes": rss[0] if rss else None, "rss_end_bytes": rss[-1] if rss else None,
        "rss_peak_bytes": max(rss) if rss else None,
        "rss_mean_bytes": int(sum(rss) / len(rss)) if rss else None,
        "conns_peak": max(conns) if conns else None,
        "engine_cpu_s": result["cost"]["user_s"] + result["cost"]["sys_s"],
        "sampler_cpu_s": sampler.own_cpu_s,
        "saturated": int(bool(result.get("saturated"))),
        "engine": result,
        "samples": [(s.t_s, s.cpu_pct, s.rss_bytes, s.processes, s.conns, s.load1)
                    for s in samples],
    }


def server_info(recipe: ServerRecipe) -> dict[str, Any]:
    from . import _envs
    from ._serve import installed_version

    env = _envs.installed(recipe.env) if recipe.env else None
    return {
        "name": recipe.name, "project": recipe.project, "flavour": str(recipe.flavour),
        "summary": recipe.summary, "version": installed_version(recipe),
        "requirements": list(recipe.env.requirements + recipe.env.no_deps) if recipe.env else [],
        "packages": env.packages if env else {}, "handles": list(recipe.handles),
    }


Progress = Callable[[str], None]


class StudyRunner:
    def __init__(self, study: Study, store: Store, progress: Progress | None = None):
        self.study = study
        self.store = store
        self.progress = progress or (lambda _msg: None)
        self.server_cpus, self.engine_cpus = split_cpus(study.server_cpus, study.engine_cpus)
        self.current_server = None  # the RunningServer of the cell in progress
        self.doctor = _doctor.findings(sorted(set(self.server_cpus + self.engine_cpus)))
        self._isolation: dict | None = None
        self._study_cpus = (self.server_cpus, self.engine_cpus)
        # The db app's database: files next to the results store, one per load (see _databases).
        self.databases = _databases.LoadDatabase(store.path.resolve().parent)

    def run(self, on_cell_done: Callable[[CellPlan, CellOutcome], None] | None = None,
            resume: bool = False) -> int:
        """Run every cell not stored yet; with resume, continue the store's unfinished run."""
        _databases.preflight({k for k in map(self._database_kind, self.study.loads) if k})
        config = json.loads(json.dumps({**self.study.raw, "name": self.study.name}, default=str))
        study_id = self.store.unfinished_study(self.study.name, config) if resume else None
        if study_id is None:
            study_id = self.store.begin_study(self.study.name, config, self._environment())
        else:
            self.store.mark_study(study_id, "running")
        done = {(c.server, c.load, c.level): c for c in self.store.cells(study_id)}
        out_of: dict[tuple[str, str], tuple[str, str]] = {}  # (server, load) -> status, why
        for c in sorted(done.values(), key=lambda c: c.position):
            if c.status in ("disqualified", "unavailable"):
                out_of.setdefault((c.server, c.load), _leaves(c.status, c.reason, c.level, c.model))
        status = "interrupted"
        try:
            for cell in plan_cells(self.study):
                if self.databases.load not in (None, cell.load.name):
                    self.databases.stop()  # after the load's last cell (a load's cells are contiguous)
                if (cell.server, cell.load.name, float(cell.level)) in done:
                    continue
                key = (cell.server, cell.load.name)
                started = time.time()
                if key in out_of:
                    outcome = CellOutcome(*out_of[key])
                else:
                    outcome = self.run_cell(cell)
                    if outcome.status in ("disqualified", "unavailable"):
                        out_of[key] = _leaves(outcome.status, outcome.reason, cell.level,
                                              cell.load.model)
                self._save(study_id, cell, outcome, started)
                if on_cell_done:
                    on_cell_done(cell, outcome)
            status = "finished"
        finally:
            self.databases.stop()
            self.store.finish_study(study_id, status)
        return study_id

    def _environment(self) -> dict[str, Any]:
        environment = _environment.collect()
        environment["engine"] = _engine.engine_version()
        environment["server_cpus"], environment["engine_cpus"] = self.server_cpus, self.engine_cpus
        environment["doctor"] = [f.as_dict() for f in self.doctor]
        return environment

    def _save(self, study_id: int, cell: CellPlan, outcome: CellOutcome, started: float) -> None:
        recipe = get(cell.server)
        self.store.save_cell(study_id, {
            "server": cell.server, "load": cell.load.name, "model": cell.load.model,
            "level": cell.level, "position": cell.position, "status": outcome.status,
            "reason": outcome.reason, "notes": outcome.notes, "diagnoses": outcome.diagnoses,
            "capabilities": outcome.capabilities,
            "server_info": server_info(recipe), "isolation": self._isolation,
            "started_unix_s": started,
        }, outcome.repeats)

    def _options(self, workers: int | None = None, env: dict[str, str] | None = None) -> ServeOptions:
        mb = self.study.memory_limit_mb
        return ServeOptions(workers=workers or self.study.workers, threads=self.study.threads,
                            app=get_app(self.study.app).module_name, app_dir=APPS_DIR,
                            cpus=self.server_cpus,
                            memory_limit_bytes=mb * 2**20 if mb else None,
                            backlog=self.study.backlog, access_log=self.study.access_log,
                            env=tuple(sorted({**self.study.app_env, **self._switches(),
                                              **(env or {})}.items())))

    def _switches(self) -> dict[str, str]:
        return {} if self.study.tcp_nodelay else {"WSGIBENCH_TCP_NODELAY": "0"}

    def _database_kind(self, load: Load) -> str | None:
        return load.database or get_app(self.study.app).database

    def _placement(self, load: Load) -> tuple[int, str | None]:
        """Workers of a cell, setting its CPUs: the study's, or for a scaling load (load.cpus = N)
        N workers on the first N CPUs and the engine on the rest, or sharing them when none remain
        (returned as a note for the cell)."""
        self.server_cpus, self.engine_cpus = self._study_cpus
        if load.cpus is None:
            return self.study.workers, None
        cpus = available_cpus()
        self.server_cpus, rest = cpus[:load.cpus], cpus[load.cpus:]
        self.engine_cpus = rest or cpus
        shared = None if rest else (f"engine shares the server's {load.cpus} CPU(s) "
                                    f"{self.server_cpus}: req/s understates the server")
        return load.cpus, shared

    def run_cell(self, cell: CellPlan) -> CellOutcome:
        recipe = get(cell.server)
        self._isolation = None  # set again once this cell's server is placed and started
        if recipe.apps and self.study.app not in recipe.apps:
            return CellOutcome("unavailable", f"serves only the app(s) {', '.join(recipe.apps)}, "
                                              f"not {self.study.app!r}")
        ok, why = availability(recipe)
        if not ok:
            return CellOutcome("unavailable", why)
        workers, shared = self._placement(cell.load)
        if workers > 1 and not recipe.multi_worker:
            return CellOutcome("unavailable", f"runs one process: cannot use {workers} workers")
        db = self.databases.use(cell.load.name, self._database_kind(cell.load), self.server_cpus)
        python = _envs.installed(recipe.env).python if recipe.env else (
            Path(sys.executable) if recipe.stdlib_python else None)
        label = f"{cell.server} · {cell.load.name} {cell.load.level_field}={cell.level:g}"
        self.progress(f"{label}: starting")
        try:
            server, workdir = start(recipe, self._options(workers, self.databases.env_for(python)))
        except StartupError as exc:
            return CellOutcome("disqualified", str(exc))
        self.current_server = server
        self._isolation = {"server_cpus": self.server_cpus, "engine_cpus": self.engine_cpus,
                           "memory": server.cgroup.applied, "workers": workers}
        if db is not None:
            self._isolation["database"] = db.info()
        if shared:
            self._isolation["placement"] = shared
        try:
            outcome = self._measure(cell, server, label)
        except EngineError as exc:
            outcome = CellOutcome("failed", f"engine: {exc}")
        finally:
            self.current_server = None
            forced = server.stop()
            shutil.rmtree(workdir, ignore_errors=True)
        if forced:
            outcome.notes.append(f"ignored SIGTERM: killed after {STOP_GRACE_S:g} s")
        if shared:
            outcome.notes.append(shared)
        if db is not None:  # show and reports print notes; the details are in isolation.database
            outcome.notes.append(f"database: {db.version()}")
        if recipe.flavour == Flavour.REFERENCE:  # `show` has no flavour column
            outcome.notes.append(str(Flavour.REFERENCE))
        return outcome

    def _measure(self, cell: CellPlan, server, label: str) -> CellOutcome:
        outcome = CellOutcome()
        port, load, study = server.ctx.port, cell.load, self.study
        caps = _checks.check(server.ctx.host, port)
        outcome.capabilities = caps.as_dict()
        if not caps.pong:
            outcome.disqualify(f"wrong answer to a plain request: {caps.detail}")
            return outcome
        load, adapted = _as_supported(load, caps)
        outcome.diagnoses.extend(d.as_dict() for d in adapted)
        seed = study.seed * 1000 + cell.position
        if load.warmup_s > 0:
            self.progress(f"{label}: warm-up")
            _engine.run_plan(load.plan(cell.level, port, list(study.requests), self.engine_cpus,
                                       seed, warmup=True))
        for idx in range(study.repeats):
            self.progress(f"{label}: repeat {idx + 1}/{study.repeats}")
            sampler = Sampler(server.processes, port)
            counters, log_bytes = _netstat.tcp_ext(), server.logged_bytes()
            sampler.start()
            try:
                result = _engine.run_plan(load.plan(cell.level, port, list(study.requests),
                                                    self.engine_cpus, seed + idx))
            finally:
                sampler.stop()
            rep = repeat_record(idx, result, sampler)
            rep["extra"] = {"netstat": _netstat.delta(counters, _netstat.tcp_ext()),
                            "log_bytes": server.logged_bytes() - log_bytes,
                            **_dropped(result)}
            outcome.repeats.append(rep)
            if self._judge(outcome, rep, server, cell):
                break
        share = 100.0 * len(self.server_cpus)
        facts = [_diagnose.facts_from(r["engine"], r, load.model, cell.level, load.wants_keep_alive,
                                      share) for r in outcome.repeats]
        outcome.diagnoses += [d.as_dict() for d in _diagnose.diagnose(facts)
                              if d.code not in {a.code for a in adapted}]
        oom = server.cgroup.oom_kills()
        if oom:
            outcome.notes.append(f"memory limit hit: {oom} OOM kill(s)")
        return outcome

    def _judge(self, outcome: CellOutcome, rep: dict[str, Any], server, cell: CellPlan) -> bool:
        """Record what this repeat says about the cell; True ends the cell."""
        gone = server.dead()
        if gone:
            oom = server.cgroup.oom_kills()
            gone += f" (memory limit hit: {oom} OOM kill(s))" if oom else ""
            outcome.disqualify(f"crashed during repeat {rep['idx'] + 1}: {gone}")
            return True
        if rep["ok"] == 0:
            outcome.disqualify(f"stopped answering: 0 valid replies in repeat {rep['idx'] + 1}")
            return True
        if rep["error_rate"] > self.study.error_threshold:
            top = _top_error(rep["engine"]["totals"])
            outcome.disqualify(f"error rate {rep['error_rate']:.1%} > "
                               f"{self.study.error_threshold:.0%} ({top})")
            return True
        if rep["saturated"] and outcome.status == "measured":
            reasons = ", ".join(rep["engine"].get("saturation_reasons", [])) or "saturated"
            outcome.status, outcome.reason = "invalid", f"load generator was the bottleneck: {reasons}"
        return False


def _as_supported(load: Load, caps: _checks.Capabilities) -> tuple[Load, list[_diagnose.Diagnosis]]:
    """The load as this server can take it. A server that silently closes keep-alive connections
    would show a wall of resets (seed 003's uWSGI): it gets a new connection per request instead,
    said beside the number; likewise pipelining is dropped for servers that do not answer it."""
    found = []
    if load.wants_keep_alive and not caps.keep_alive:
        load = replace(load, keep_alive=False)
        found.append(_diagnose.Diagnosis(
            "no-keep-alive", "no keep-alive: the server does not answer a second request on a "
            "connection, so this was measured with a new connection per request"))
    pipeline = load.params.get("pipeline", 1)
    if pipeline not in (1, False) and not caps.pipelining:
        load = replace(load, params={**load.params, "pipeline": 1 if pipeline is not True else False})
        found.append(_diagnose.Diagnosis(
            "no-pipelining", "no pipelining: pipelined requests were not all answered, so this "
            "was measured without pipelining"))
    return load, found


def _dropped(result: dict[str, Any]) -> dict[str, Any]:
    """Seed 000's check: every request the plan called for was sent and got a valid reply."""
    model, totals = result["plan"]["model"], result["totals"]
    expected = None
    if model["kind"] == "sessions":
        expected = round(model["users_per_s"] * model["duration_s"]) * model["requests"]
    elif model["kind"] == "count":
        expected = model["requests"]
    elif "connections_total" in model:
        expected = model["connections_total"] * model.get("calls", 1)
    sent, ok = int(totals["requests_sent"]), int(totals["ok"])
    dropped = _errors(totals) > 0 or ok != sent or (expected is not None and ok != expected)
    return {"expected_requests": expected, "nothing_dropped": not dropped}


def _leaves(status: str, reason: str | None, level: float, model: str) -> tuple[str, str]:
    """What the later levels of a server that left the sweep record."""
    if status == "unavailable" or (reason or "").startswith("disqualified at"):
        return status, reason or ""
    from ._loads import MODELS

    return status, f"disqualified at {MODELS[model][0]} {level:g}: {reason}"


def _top_error(totals: dict[str, Any]) -> str:
    errors = {k: v for k, v in totals.get("errors", {}).items() if v}
    if not errors:
        return "no errors"
    return ", ".join(f"{k} {v}" for k, v in sorted(errors.items(), key=lambda kv: -kv[1])[:3])
