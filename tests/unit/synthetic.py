"""Synthetic results stores for unit tests of reports and compare (built with the Store API; no tests here)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from wsgibench.machine.sampler import Sample
from wsgibench.results.capacity import COST_NOTE, STEP_NOTE, Budget, Search, cost_rates
from wsgibench.results.capacity_step import judge_step
from wsgibench.results.engine_result import ERROR_CLASSES, EngineResult
from wsgibench.results.repeat import Repeat
from wsgibench.results.store import Store

ENV = {
    "cpu_model": "Test CPU 3000",
    "cpu_count": 2,
    "kernel": "6.1.0-test",
    "memory_bytes": 8 * 2**30,
    "python": "3.11.2",
    "wsgibench_version": "0.1.0",
    "os": "Debian 12",
    "engine": {"engine_version": "0.1.0", "protocol_version": 1, "format_version": 2},
}


def _kind(hist: dict, none: dict) -> dict:
    """The one kind: its replies' latency, and no failure (format 2)."""
    return {
        "name": "pong",
        "latency_us": hist,
        "reply_latency_us": hist,
        "failed_latency_us": {**none, "max": 0},
        "service_us": None,
        "connect_us": hist,
    }


def engine_result(
    rps: float,
    p50: float,
    p99: float,
    errors: dict | None = None,
    model: str = "closed",
    level: float = 4,
    seconds: float = 1.0,
) -> dict:
    errors = {k: 0 for k in ERROR_CLASSES} | (errors or {})
    ok = int(rps * seconds)
    hist = {
        "count": ok,
        "min": 1,
        "mean": p50,
        "p50": p50,
        "p90": (p50 + p99) / 2,
        "p99": p99,
        "p999": p99 * 1.5,
        "max": p99 * 2,
        "stdev": 1.0,
        "hdr": "",
    }
    field = {"closed": "connections", "rate": "rate", "sessions": "users_per_s"}[model]
    plan_model = {"kind": model, field: level, "duration_s": seconds}
    if model == "sessions":  # a plan of sessions says how many requests each makes, and the pause
        plan_model |= {"requests": 1, "think_s": 0}
    none = {**hist, "count": 0, "min": 0, "mean": 0.0, "p50": 0, "p90": 0, "p99": 0, "p999": 0}
    return {
        "format_version": 2,
        "engine": {"name": "wsgibench-engine", "version": "0.1.0", "protocol_version": 1},
        "plan": {"target": {"host": "127.0.0.1", "port": 8080}, "model": plan_model},
        "elapsed_s": seconds,
        "totals": {
            "requests_sent": ok + sum(errors.values()),
            "responses": ok,
            "ok": ok,
            "errors": errors,
            "rps_ok": rps,
        },
        "kinds": [_kind(hist, none)],
        "timeline": [
            {
                "t_s": t / 10,
                "completed": ok // 10,
                "ok": ok // 10,
                "open_connections": level,
                "p50_us": p50,
                "p99_us": p99,
            }
            for t in range(10)
        ],
        "cost": {"user_s": 0.1, "sys_s": 0.1, "cpu_fraction": 0.2, "threads": 1},
        "saturated": False,
        "saturation_reasons": [],
    }


def repeat(
    idx: int,
    rps: float,
    p50: float = 500.0,
    p99: float = 2000.0,
    cpu: float = 90.0,
    rss: int = 40 * 2**20,
    errors: dict | None = None,
    model: str = "closed",
    level: float = 4,
) -> Repeat:
    result = engine_result(rps, p50, p99, errors, model, level)
    ok = result["totals"]["ok"]
    err = sum(result["totals"]["errors"].values())
    return Repeat(
        idx=idx,
        rps_ok=rps,
        requests=ok + err,
        ok=ok,
        errors=err,
        error_rate=err / (ok + err) if ok + err else 0.0,
        latency_p50_us=p50,
        latency_p90_us=(p50 + p99) / 2,
        latency_p99_us=p99,
        latency_max_us=p99 * 2,
        cpu_mean_pct=cpu,
        cpu_peak_pct=cpu * 1.1,
        rss_start_bytes=rss // 2,
        rss_end_bytes=rss,
        rss_peak_bytes=rss,
        rss_mean_bytes=rss * 3 // 4,
        conns_peak=int(level),
        engine_cpu_s=0.2,
        sampler_cpu_s=0.01,
        saturated=False,
        engine=EngineResult.from_dict(result),
        samples=tuple(Sample(t / 10, cpu, rss, 2, int(level), 0.5) for t in range(10)),
        more={"latency": LATENCY},
    )


# What a repeat of format 2 records of its latency: every request sent, no failure among them.
LATENCY = {"covers_failures": True, "bounds": [], "replies": None}


SERVER_INFO = {
    "nginx-baseline": {"flavour": "baseline", "version": "1.22.1"},
    "gunicorn-gthread": {"flavour": "prefork+threads", "version": "23.0.0"},
    "waitress": {"flavour": "threaded", "version": "3.0.2"},
}
CAPS = {"pong": True, "http10": True, "keep_alive": True, "pipelining": False}


def _cell(
    server: str, load: str, model: str, level: float, position: int, status: str, reason: str | None
) -> dict:
    return {
        "server": server,
        "load": load,
        "model": model,
        "level": level,
        "position": position,
        "status": status,
        "reason": reason,
        "notes": ["no pipelining: pipelined requests were not all answered"],
        "diagnoses": [
            {
                "code": "listen_overflow",
                "message": "listen queue overflowed 3 times",
                "invalid": False,
            }
        ]
        if status == "disqualified"
        else [],
        "capabilities": CAPS,
        "server_info": {
            "name": server,
            **SERVER_INFO.get(server, {"flavour": "threaded", "version": "1.0"}),
        },
        "isolation": {"server_cpus": [0], "engine_cpus": [1]},
    }


def build_store(
    path: Path,
    speeds: dict[str, float] | None = None,
    levels=(4, 16),
    repeats: int = 3,
    env: dict | None = None,
    model: str = "closed",
    seed: int = 1,
    slowdown: float = 1.0,
    disqualify: tuple[str, float] | None = None,
    name: str = "synthetic",
    jitter: float = 0.01,
    random_jitter: bool = True,
    command_line: list[str] | None = None,
    cpu: dict[str, float] | None = None,
    config: dict | None = None,
    starts: int | None = None,
) -> Path:
    """A finished study: speed * level-factor req/s, ~1 % jitter (random, else -, 0, + in turn),
    CPU % from `cpu` (default 95); `config`: more keys of the study as run (its app). Repeat i of
    server start i % `starts` (None: each its own; 0: none recorded, a store from before)."""
    speeds = speeds or {"nginx-baseline": 20000.0, "gunicorn-gthread": 5000.0, "waitress": 3000.0}
    rng = random.Random(seed)
    store = Store(path)
    load = {"name": model, "model": model, "levels": list(levels), "duration_s": 1.0}
    load |= {"requests": 5, "think_s": 0.1} if model == "sessions" else {}
    table = {"name": name, "repeats": repeats, "load": [load], "servers": list(speeds)}
    table |= config or {}
    study_id = store.begin_study(name, table | {"command_line": command_line or []}, env or ENV)
    position = 0
    for level in levels:
        for server, speed in speeds.items():
            status, reason, reps = "measured", None, []
            if disqualify and disqualify == (server, level):
                status, reason = "disqualified", "error rate 12.0% > 5% (reset 40)"
                reps = [repeat(0, speed * 0.5, errors={"reset": 40}, model=model, level=level)]
            else:
                for i in range(repeats):
                    shake = rng.uniform(-jitter, jitter) if random_jitter else jitter * (i % 3 - 1)
                    rps = speed * (1 + level / 100) / slowdown * (1 + shake)
                    p50 = 1e6 * level / rps
                    use = (cpu or {}).get(server, 95.0) + rng.uniform(-1, 1)
                    rss = (30 + level) * 2**20
                    rep = repeat(i, rps, p50, p50 * 3, use, rss, model=model, level=level)
                    started = {"start": i % (starts or repeats)} if starts != 0 else {}
                    reps.append(replace(rep, more={**rep.more, **started}))
            cell = _cell(server, load["name"], model, level, position, status, reason)
            store.save_cell(study_id, cell, reps)
            position += 1
    store.finish_study(study_id)
    store.close()
    return path


def _capacity_repeats(
    knee: float, rate: float, calls: int, cpu_us: float, repeats: int
) -> list[Repeat]:
    """A server below its knee (connections/s) answers with p99 2 ms; from it on, p99 50 ms and
    a few timeouts, its replies capped at the knee; CPU per request cpu_us at every rate."""
    over = rate >= knee
    rps = min(rate, knee) * calls
    p99 = 50_000.0 if over else 2000.0
    cpu = cpu_us * rps / 1e6 * 100
    errors = {"timeout": 3} if over else None
    return [
        repeat(i, rps, p99 / 4, p99, cpu, 20 * 2**20, errors, model="rate", level=rate)
        for i in range(repeats)
    ]


def _capacity_cell(
    server: str, rate: float, position: int, note: str, invalid: bool = False
) -> dict:
    status, reason = ("invalid", "engine saturated") if invalid else ("measured", None)
    cell = _cell(server, "p99-10ms", "rate", rate, position, status, reason)
    isolation = {"server_cpus": [0], "engine_cpus": [1], "workers": 1}
    return cell | {"notes": [note], "isolation": isolation}


def build_capacity_store(
    path: Path,
    knees: dict[str, float],
    cpu_us: dict[str, float] | None = None,
    resolution: float = 0.05,
    start: float = 100.0,
    calls: int = 10,
    repeats: int = 2,
    invalid_at: float | None = None,
    name: str = "capacity",
) -> Path:
    """A finished study of one capacity load "p99-10ms" (p99 ≤ 10 ms) as the runner stores it:
    per server the search's steps (model rate, in the order run, each with its verdict in a
    note), then the cells at 25/50/75 % of the capacity for CPU cost (_capacity_repeats says how
    each server answers); a step at `invalid_at` or above is engine-limited."""
    budget = Budget(10.0)
    load = {"name": "p99-10ms", "model": "capacity", "slo_p99_ms": 10, "calls": calls}
    load |= {"start_rate": start, "resolution": resolution, "duration_s": 1.0}
    config = {"name": name, "repeats": repeats, "load": [load], "servers": list(knees)}
    store = Store(path)
    study_id = store.begin_study(name, config | {"command_line": []}, ENV)
    cells: list[tuple[dict, list[Repeat]]] = []
    for server, knee in knees.items():
        cost = (cpu_us or {}).get(server, 50.0)
        search = Search(start=start, resolution=resolution)
        while (rate := search.next_rate()) is not None:
            invalid = invalid_at is not None and rate >= invalid_at
            reps = _capacity_repeats(knee, rate, calls, cost, repeats)
            step = judge_step(rate, reps, budget, invalid="engine saturated" if invalid else None)
            note = f"{STEP_NOTE} ({budget.describe()}): {step.status}, {step.reason}"
            cells.append((_capacity_cell(server, rate, len(cells), note, invalid), reps))
            search.record(step)
        found = search.result()
        if found.capacity is not None and found.invalid is None:
            for rate in cost_rates(found.capacity, [s.rate for s in search.steps]):
                reps = _capacity_repeats(knee, rate, calls, cost, repeats)
                cells.append((_capacity_cell(server, rate, len(cells), COST_NOTE), reps))
    for cell, reps in cells:
        store.save_cell(study_id, cell, reps)
    store.finish_study(study_id)
    store.close()
    return path
