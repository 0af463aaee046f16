"""One cell's life, top to bottom: prepare, start, check, measure, judge, store (its starts taken
in turn with the level's other cells: run/turns.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from wsgibench.databases import LoadDatabase
from wsgibench.errors import EngineError, LoadHostLost, StartupError
from wsgibench.machine import cpustat
from wsgibench.machine.process import STOP_GRACE_S, RunningServer
from wsgibench.machine.topology import Layout, Topology
from wsgibench.results import deaths, diagnose
from wsgibench.results.diagnose import Diagnosis
from wsgibench.results.engine_plan import EnginePlan
from wsgibench.results.repeat import Repeat
from wsgibench.results.store import Store
from wsgibench.results.verdict import CellStatus, Verdict
from wsgibench.run import checks, protocol_probe, tls, ws_probe
from wsgibench.run.admit import refusal, tls_refusal
from wsgibench.run.appcheck import PreparedApps
from wsgibench.run.engine import Engine
from wsgibench.run.judge import engine_headroom, judge_repeat
from wsgibench.run.outcome import CellOutcome, ServerHandle
from wsgibench.run.placement import Placement, place
from wsgibench.run.repeat import RepeatContext, Watch, measure_repeat, watch_processes
from wsgibench.run.serve import ServeOptions, server_info, server_python, start
from wsgibench.servers import ServerRecipe, get
from wsgibench.study.apps import AppSpec
from wsgibench.study.loads import Load
from wsgibench.study.model import Study
from wsgibench.study.plan import CellPlan

# The note on a cell that a lost load host made invalid: `--resume` runs such a cell again.
HOST_LOST = "load host lost: the other hosts were stopped, nothing was re-run"


@dataclass
class CellContext:
    """What a cell needs from the study run it belongs to."""

    study: Study
    engine: Engine
    databases: LoadDatabase
    layout: Layout  # the study's CPU layout (scaling loads make their own)
    topology: Topology
    progress: Callable[[str], None] = lambda _msg: None
    # Per-CPU busy time (/proc/stat), read before and after each repeat; tests give their own.
    cpu_times: Callable[[], cpustat.CpuTimes] = cpustat.snapshot
    # Told of the running server when it is up (and None when it is gone): the study loop keeps it
    # so an interrupt, or a test, can see it.
    on_server: Callable[[RunningServer | None], None] = lambda _server: None
    # The study's apps once ready (run/appcheck.py): interfaces read, dependencies installed.
    apps: PreparedApps = field(default_factory=PreparedApps)
    # What watches the server's processes in each repeat (tests give their own).
    watch: Callable[[ServerHandle], Watch] = watch_processes

    def app(self, load: Load) -> AppSpec:
        return self.apps.app(self.study, load)


# -- 1. prepare ------------------------------------------------------------------------------------


def serve_options(
    study: Study,
    placement: Placement,
    env: dict[str, str],
    app: AppSpec,
    app_path: tuple[Path, ...],
) -> ServeOptions:
    mb = study.memory_limit_mb
    switches = {} if study.tcp_nodelay else {"WSGIBENCH_TCP_NODELAY": "0"}
    return ServeOptions(
        workers=placement.workers,
        threads=placement.server_threads,
        exact_threads=placement.exact_threads,
        runtime_mode=placement.runtime_mode,
        app=app,
        app_path=app_path,
        cpus=placement.server_cpus,
        memory_limit_bytes=mb * 2**20 if mb else None,
        cpu_quota=placement.cpu_quota,
        backlog=study.backlog,
        access_log=study.access_log,
        env=tuple(sorted({**app.env, **study.app_env, **switches, **env}.items())),
        host=study.server_host,
    )


def database_kind(study: Study, load: Load) -> str | None:
    return load.database or study.app_of(load).database


# -- the whole life ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """A cell ready to start its server: where it runs, with what app and options."""

    recipe: ServerRecipe
    placement: Placement
    app: AppSpec
    options: ServeOptions
    db: Any
    deps: Any


def prepare(cell: CellPlan, ctx: CellContext) -> Prepared | CellOutcome:
    """Place the cell and make its server's options (its load's database started), or the
    unavailable outcome of a server that cannot take it."""
    recipe, study = get(cell.server), ctx.study
    placement = place(cell.load, study, recipe, ctx.layout, ctx.topology)
    app = ctx.app(cell.load)
    refused = refusal(recipe, app, placement.workers, ctx.apps) or tls_refusal(recipe, cell.load)
    if refused:
        return refused
    db = ctx.databases.use(cell.load.name, database_kind(study, cell.load), placement.server_cpus)
    env = ctx.databases.env_for(server_python(recipe), recipe.interface)
    deps = ctx.apps.deps_for(app, server_python(recipe))
    options = serve_options(study, placement, env, app, (deps.site,) if deps else ())
    return Prepared(recipe, placement, app, replace(options, tls=cell.load.tls), db, deps)


def one_start(
    cell: CellPlan,
    ctx: CellContext,
    recipe: ServerRecipe,
    placement: Placement,
    options: ServeOptions,
    db: Any,
) -> CellOutcome:
    """One server start of the cell: start it on new ports, check it, warm it up and run its
    share of the repeats; stopped whatever happens."""
    try:
        server, workdir = start(recipe, options)
    except StartupError as exc:
        return CellOutcome(CellStatus.DISQUALIFIED, str(exc))
    if placement.cpu_quota is not None and not server.quota.holds(server.cpu_quota):
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        return CellOutcome(CellStatus.UNAVAILABLE, f"CPU quota: {server.cpu_quota}")
    ctx.on_server(server)
    life = ctx.watch(server)  # the server's processes over the whole start, up to its stop
    life.start()
    isolation, fallback = _isolation(placement, server, recipe)
    if cell.load.websocket:  # read back from the server, said with the number
        isolation["websocket_library"] = ws_probe.websocket_library(server.host, server.port)
    if db is not None:
        isolation["database"] = db.info()
    try:
        outcome = check_and_measure(cell, server, ctx, placement)
    except LoadHostLost as exc:  # invalid, said so; `--resume` runs the cell again
        outcome = CellOutcome(CellStatus.INVALID, f"{exc}; {HOST_LOST}", notes=[HOST_LOST])
    except EngineError as exc:
        outcome = CellOutcome(CellStatus.FAILED, f"engine: {exc}")
    finally:
        ctx.on_server(None)
        isolation["worker_deaths"] = deaths.life_record(
            life.stop(), server.cgroup.oom_kills(), server.log_since([0] * len(server.log_marks()))
        )
        # The memory group's own high-water mark (shared pages once), beside the sampler's summed
        # RSS: the whole start, warm-up included.
        isolation["memory_peak_bytes"] = server.cgroup.peak_bytes()
        if placement.cpu_quota is not None:  # the whole start, warm-up included
            isolation["cpu_throttling"] = server.quota.throttling()
        forced = server.stop()
        tls.forget(server.host, server.port)
        shutil.rmtree(workdir, ignore_errors=True)
    outcome.isolation = isolation
    if forced:
        outcome.notes.append(f"ignored SIGTERM: killed after {STOP_GRACE_S:g} s")
    if fallback:
        outcome.diagnoses.append(fallback.as_dict())
    return outcome


def _isolation(
    placement: Placement, server: RunningServer, recipe: ServerRecipe
) -> tuple[dict[str, Any], Diagnosis | None]:
    """What the cell records of where and under which limits its server ran, verified; and the
    ASGI loop and parser the server really runs, with a fallback from what it asked for."""
    isolation: dict[str, Any] = {
        "server_cpus": placement.server_cpus,
        "engine_cpus": placement.engine_cpus,
        "memory": server.memory,
        "workers": placement.workers,
        "layout": placement.as_dict(),
    }
    isolation["runtime"], fallback = checks.asgi_runtime(recipe, server.host, server.port)
    if placement.shared:
        isolation["placement"] = placement.shared
    if placement.cpu_quota is not None:
        isolation["cpu_quota"] = server.cpu_quota
    return isolation, fallback


# -- 2. check ----------------------------------------------------------------------------------------


def check_and_measure(
    cell: CellPlan, server: ServerHandle, ctx: CellContext, placement: Placement
) -> CellOutcome:
    caps = checks.check(server.host, server.port, ctx.app(cell.load).probe)
    path = ctx.study.requests_of(cell.load)[0].path
    caps = protocol_probe.learn(caps, cell.load, server.host, server.port, path)
    return measure(cell, server, caps, ctx, placement)


# -- 3. measure, and 4. judge each repeat (run/judge.py) ---------------------------------------


def measure(
    cell: CellPlan,
    server: ServerHandle,
    caps: checks.Capabilities,
    ctx: CellContext,
    placement: Placement,
) -> CellOutcome:
    """Warm up, run the repeats, judge each, diagnose the cell. Needs no real server: the handle
    and the engine may be fakes (tests/unit/run)."""
    outcome, study = _checked(cell.load, caps, ctx.app(cell.load).spec), ctx.study
    if outcome.status != CellStatus.MEASURED:
        return outcome
    load, adapted = checks.as_supported(cell.load, caps)
    outcome.diagnoses.extend(d.as_dict() for d in adapted)
    seed = study.seed * 1000 + cell.position
    plan_at = partial(
        load.plan,
        level=cell.level,
        port=server.port,
        requests=list(study.requests_of(cell.load)),
        cpus=placement.engine_cpus,
        threads=placement.engine_threads,
        host=server.host,
        tls_ca_pem=ca_pem(server) if load.tls else None,
    )
    if load.warmup_s > 0:
        ctx.progress(f"{cell.label}: warm-up")
        ctx.engine.run(plan_at(seed=seed, warmup=True))
    judged = _repeats(cell, lambda idx: plan_at(seed=seed + idx), server, ctx, placement, outcome)
    share = 100.0 * (placement.cpu_quota or len(placement.server_cpus))
    facts = [
        diagnose.facts_from(r, v, load.model, cell.level, load.wants_keep_alive, share)
        for r, v in judged
    ]
    codes = {a.code for a in adapted}
    outcome.diagnoses += [d.as_dict() for d in diagnose.diagnose(facts) if d.code not in codes]
    skews = [
        r.engine.start_skew_s
        for r in outcome.repeats
        if r.engine.load_hosts and r.engine.start_skew_s is not None
    ]
    if skews:  # load from several hosts: how far apart they started, in the worst repeat
        hosts = len(outcome.repeats[0].engine.load_hosts)
        outcome.notes.append(f"load from {hosts} hosts, started ≤ {1e3 * max(skews):.1f} ms apart")
    oom = server.cgroup.oom_kills()
    if oom:
        outcome.notes.append(f"memory limit hit: {oom} OOM kill(s)")
    notes = (engine_headroom(outcome.repeats), _broadcast_note(outcome.repeats))
    outcome.notes += [n for n in notes if n]
    return outcome


def _repeats(
    cell: CellPlan,
    plan_of: Callable[[int], EnginePlan],
    server: ServerHandle,
    ctx: CellContext,
    placement: Placement,
    outcome: CellOutcome,
) -> list[tuple[Repeat, Verdict]]:
    """The repeats of one server start, each judged, marked with the start (its extra_json's
    "start") and applied to `outcome`: the start's share (or the study's count), until a repeat
    ends the cell or the cell's stop rule says its verdict is known."""
    judged: list[tuple[Repeat, Verdict]] = []
    total, first = cell.repeats or ctx.study.repeats, cell.first_repeat
    count = cell.share or total
    for idx in range(first, first + count):
        ctx.progress(f"{cell.label}: repeat {idx + 1}/{total}")
        rep = measure_repeat(idx, plan_of(idx), server, _repeat_context(ctx), placement)
        rep = replace(rep, more={**rep.more, "start": cell.start})  # the start it belongs to
        verdict = judge_repeat(rep, server, ctx.study.error_threshold)
        judged.append((rep, verdict))
        outcome.apply(rep, verdict)
        if verdict.ends_cell:
            break
        last = idx + 1 == first + count
        enough = cell.stop_at([r for r, _ in judged]) if cell.stop_at and not last else ""
        if enough:
            outcome.notes.append(f"stopped after repeat {idx + 1} of {total}: {enough}")
            break
    return judged


def _repeat_context(ctx: CellContext) -> RepeatContext:
    db = ctx.databases.db
    return RepeatContext(ctx.engine, ctx.cpu_times, db.pids if db is not None else list, ctx.watch)


def _checked(load: Load, caps: checks.Capabilities, own_app: str) -> CellOutcome:
    """The cell as the behaviour checks leave it: disqualified for a wrong answer to a plain
    request, unavailable for a protocol its server does not speak (or one's own app does not:
    `own_app`), else still to measure."""
    outcome = CellOutcome(capabilities=caps.as_dict())
    if not caps.pong:
        outcome.disqualify(f"wrong answer to a plain request: {caps.detail}")
    elif lacks := protocol_probe.lacking(load, caps, own_app):
        outcome.status, outcome.reason = CellStatus.UNAVAILABLE, lacks
    return outcome


def _broadcast_note(repeats: list[Repeat]) -> str | None:
    """A broadcast load's fan-out in its last repeat, in one line."""
    ws = repeats[-1].engine.websocket if repeats else None
    return ws.broadcast.summary() if ws is not None and ws.broadcast is not None else None


def ca_pem(server: ServerHandle) -> str:
    """The CA of the certificate the server was started with (a TLS cell)."""
    files = tls.endpoint(server.host, server.port)
    if files is None:
        raise EngineError(f"a TLS load, but the server on port {server.port} serves no TLS")
    return files.ca_pem


# -- 5. store ----------------------------------------------------------------------------------------


def save_cell(
    store: Store, study_id: int, cell: CellPlan, outcome: CellOutcome, started: float
) -> int:
    recipe = get(cell.server)
    return store.save_cell(
        study_id,
        {
            "server": cell.server,
            "load": cell.load.name,
            "model": cell.load.model,
            "level": cell.level,
            "position": cell.position,
            "status": outcome.status,
            "reason": outcome.reason,
            "notes": outcome.notes,
            "diagnoses": outcome.diagnoses,
            "capabilities": outcome.capabilities,
            "server_info": {**server_info(recipe), "app": outcome.app},
            "isolation": outcome.isolation,
            "started_unix_s": started,
        },
        outcome.repeats,
    )
