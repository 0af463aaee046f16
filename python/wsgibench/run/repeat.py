"""One repeat measured: the sampler, the watch over the server's processes and the engine run
together, and what the harness counted beside them (the server's CPU from its cgroup, the CPUs
other work took, deaths and the requests lost with them)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from wsgibench.machine import cpustat, netstat
from wsgibench.machine.deathwatch import Deaths, DeathWatch
from wsgibench.machine.sampler import Sampler, cpu_between
from wsgibench.results import deaths, latency
from wsgibench.results.engine_plan import EnginePlan
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.repeat import Counters, Repeat
from wsgibench.run.engine import Engine
from wsgibench.run.outcome import ServerHandle
from wsgibench.run.placement import Placement
from wsgibench.run.records import dropped, interference_record, repeat_record, window_record


class Watch(Protocol):
    """What watches the server's processes during a repeat (machine/deathwatch.DeathWatch)."""

    def start(self) -> None: ...

    def stop(self) -> Deaths: ...


def watch_processes(server: ServerHandle) -> Watch:
    return DeathWatch(server.tree_pids)


@dataclass
class RepeatContext:
    """What measuring a repeat needs of its study run: the engine, the CPUs' busy time, the pids
    of side processes pinned with the server (a database), and the watch over the server's
    processes (tests give their own of each)."""

    engine: Engine
    cpu_times: Callable[[], cpustat.CpuTimes] = cpustat.snapshot
    side_pids: Callable[[], list[int]] = list
    watch: Callable[[ServerHandle], Watch] = watch_processes


def measure_repeat(
    idx: int, plan: EnginePlan, server: ServerHandle, ctx: RepeatContext, placement: Placement
) -> Repeat:
    sampler = Sampler(server.processes, server.port, cgroup_cpu=server.cpu_usage_s)
    watch = ctx.watch(server)
    tcp, log_bytes, marks = netstat.tcp_ext(), server.logged_bytes(), server.log_marks()
    oom_before = server.cgroup.oom_kills()
    side = cpustat.processes_cpu_s(ctx.side_pids())
    cpus, harness, started = ctx.cpu_times(), cpustat.own_cpu_s(), time.monotonic()
    watch.start()
    sampler.start()
    try:
        result = ctx.engine.run(plan)
    finally:
        sampler.stop()
        seen = watch.stop()
    # the engine's own run time at least (a fake engine returns at once)
    wall = max(time.monotonic() - started, result.elapsed_s)
    harness = cpustat.own_cpu_s() - harness
    side_after = cpustat.processes_cpu_s(list(side))
    cgroup_s = sampler.cgroup_cpu_s
    tree_s = cgroup_s if cgroup_s is not None else sampler.tree_cpu_s
    server_own = tree_s + sum(side_after.get(p, t) - t for p, t in side.items())
    seen = deaths.name_exits(seen, server.cgroup.oom_kills() - oom_before, server.log_since(marks))
    expected, nothing_dropped = dropped(result)
    counters = Counters(
        netstat=netstat.delta(tcp, netstat.tcp_ext()),
        log_bytes=server.logged_bytes() - log_bytes,
        kinds=latency.by_kind(result),
        window=window_record(result),
        interference=interference_record(
            cpus,
            ctx.cpu_times(),
            wall,
            placement.server_cpus,
            server_own,
            placement.engine_cpus,
            result.cost.cpu_s,
            harness,
            result.runqueue_wait_fraction,
            result.cost.busiest_fraction,
        ),
        expected_requests=expected,
        nothing_dropped=nothing_dropped,
        threads=_threads(sampler, result),
        worker_deaths=_deaths(seen, result),
        latency=latency_record(result),
        server_cpu=_server_cpu(sampler, result),
        wrong_replies=[w.as_dict() for w in result.wrong_replies],
    )
    return repeat_record(idx, result, sampler, counters)


def latency_record(result: EngineResult) -> dict[str, Any]:
    """What the headline latency covers, which of its figures are bounds, and the replies' own."""
    rep = latency.replies(result)
    return {
        "covers_failures": result.latency_covers_failures,
        "bounds": latency.bounds(result).as_list(),
        "replies": None
        if rep is None
        else {"p50_us": rep.p50, "p90_us": rep.p90, "p99_us": rep.p99, "max_us": rep.max},
    }


def _deaths(seen: Deaths, result: EngineResult) -> dict[str, Any] | None:
    if not seen.exits and not seen.appeared:
        return None
    return deaths.record(seen, deaths.lost_with(result, seen.exits))


def _window(result: EngineResult) -> tuple[float, float] | None:
    """The measured window in wall-clock seconds (None: the result states none)."""
    window_s = result.totals.window_s
    if not window_s or not result.started_unix_s:
        return None
    return result.started_unix_s, result.started_unix_s + window_s


def _server_cpu(sampler: Sampler, result: EngineResult) -> dict[str, Any] | None:
    """The server's CPU seconds from its cgroup (every process of it, those that exited too):
    over the sampling and over the engine's measured window."""
    whole = sampler.cgroup_cpu_s
    if whole is None:
        return None
    span = _window(result)
    in_window = cpu_between(sampler.cgroup, *span) if span else None
    return {
        "source": "cgroup v2 cpu.stat usage_usec",
        "cpu_s": round(whole, 4),
        "window_cpu_s": None if in_window is None else round(in_window, 4),
        "window_s": None if span is None else round(span[1] - span[0], 4),
    }


def _threads(sampler: Sampler, result: EngineResult) -> dict[str, Any] | None:
    """The server's threads (machine/threads.py), and with its cgroup's account: the cores used
    over the measured window, and what processes that exited used as a group of its own."""
    use = sampler.threads.summary()
    if use is None:
        return None
    found = use.as_dict()
    cpu = _server_cpu(sampler, result)
    if cpu is None:
        found["cores_source"] = "the live threads' own times over the sampling"
        return found
    counted = sum(use.groups_cpu_s.values())
    exited = (sampler.cgroup_cpu_s or 0.0) - counted
    if exited > 0.01:  # beyond the clock ticks' rounding
        found["groups_cpu_s"] = {**use.groups_cpu_s, "exited processes": round(exited, 3)}
    if cpu["window_cpu_s"] is not None and cpu["window_s"]:
        found["cores_used"] = round(cpu["window_cpu_s"] / cpu["window_s"], 4)
        found["cores_source"] = "the cgroup's CPU time over the measured window"
    return found
