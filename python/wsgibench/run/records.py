"""What one repeat stores: the headline numbers from the engine and the sampler, both in full, and
seed 000's check that nothing the plan called for was dropped."""

from __future__ import annotations

import math
from dataclasses import replace

from wsgibench.machine import cpustat
from wsgibench.machine.sampler import Sampler
from wsgibench.results import latency
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.repeat import Counters, Interference, Repeat, Window


def repeat_record(
    idx: int, result: EngineResult, sampler: Sampler, counters: Counters | None = None
) -> Repeat:
    """One stored repeat: headline numbers from the engine and the sampler, plus both in full."""
    totals = result.totals
    # Requests the engine re-sent after a worker died are lost with it: errors of their own
    # class (`worker_deaths.lost`), beside the connections that broke (already errors).
    lost = _lost_resent(counters)
    ok, errors, caused = totals.ok, totals.error_count + lost, totals.server_errors + lost
    # every request of every kind that ended, failures at the time they failed: the headline
    lat = latency.overall(result)
    samples = sampler.samples
    inner = samples[1:-1] or samples  # start/end samples carry no CPU interval of the load
    rss = [s.rss_bytes for s in samples]
    conns = [s.conns for s in samples if s.conns is not None]
    cpu = [s.cpu_pct for s in inner]
    return Repeat(
        idx=idx,
        rps_ok=rps_ok(result),
        requests=totals.requests_sent,
        ok=ok,
        errors=errors,
        # The server's share: errors the engine's own limits caused are not the server's.
        error_rate=caused / (ok + caused) if ok + caused else 0.0,
        latency_p50_us=lat.p50 if lat else None,
        latency_p90_us=lat.p90 if lat else None,
        latency_p99_us=lat.p99 if lat else None,
        latency_max_us=lat.max if lat else None,
        cpu_mean_pct=sum(cpu) / len(cpu) if cpu else None,
        cpu_peak_pct=max(cpu) if cpu else None,
        rss_start_bytes=rss[0] if rss else None,
        rss_end_bytes=rss[-1] if rss else None,
        rss_peak_bytes=max(rss) if rss else None,
        rss_mean_bytes=int(sum(rss) / len(rss)) if rss else None,
        conns_peak=max(conns) if conns else None,
        engine_cpu_s=result.cost.cpu_s,
        sampler_cpu_s=sampler.own_cpu_s,
        saturated=result.saturated,
        engine=result,
        samples=tuple(samples),
        counters=counters,
    )


def _lost_resent(counters: Counters | None) -> int:
    found = counters.worker_deaths if counters is not None else None
    return int(((found or {}).get("lost") or {}).get("resent") or 0)


def rps_ok(result: EngineResult) -> float:
    """Valid replies per second of the measured window: replies that completed in the drain
    after it (requests still in flight when the window closed) do not stretch the divisor. An
    engine that does not report its window is read over its whole run."""
    totals = result.totals
    if totals.window_s and totals.ok_in_window is not None:
        return totals.ok_in_window / totals.window_s
    return totals.ok / result.elapsed_s if result.elapsed_s else 0.0


def window_record(result: EngineResult) -> Window:
    """The measured window and what completed in it and after it (the drain), for the store."""
    t = result.totals
    return Window(
        window_s=t.window_s,
        ok_in_window=t.ok_in_window,
        completed_after_window=t.completed_after_window,
        unannounced_closes=t.unannounced_closes,
        resent=t.resent,
        engine_turnaround_us=t.turnaround_us,
    )


def dropped(result: EngineResult) -> tuple[int | None, bool]:
    """Seed 000's check: every request the plan called for was sent and got a valid reply."""
    expected, totals = result.plan.expected_requests, result.totals
    sent, ok = totals.requests_sent, totals.ok
    lost = totals.error_count > 0 or ok != sent or (expected is not None and ok != expected)
    return expected, not lost


CONTENDED_PCT = cpustat.CONTENDED_PCT
STARVED_WAIT_PCT = 5.0  # the engine waited for a CPU this share of its time ...
STARVED_DEMAND = 0.5  # ... while it wanted (used + waited) at least half a CPU per thread


# The kernel's tick: /proc/stat charges each tick to the state the CPU is in at that moment
# (CONFIG_TICK_CPU_ACCOUNTING), so a CPU's busy time is a sample of HZ ticks a second. 250 is
# Debian's and most distributions' HZ and the lowest of those in use with 1000: taking the lowest
# overstates the error where HZ is higher, never understates it.
KERNEL_HZ = 250


def resolution_pct(wall_s: float, cpus: int, busy_pct: float = 50.0) -> float:
    """How finely /proc/stat measures a set of CPUs' other work over a repeat, in % of their
    capacity. Busy time is sampled once a kernel tick, the processes' own time is exact: at a busy
    share p over n = KERNEL_HZ × seconds × CPUs ticks, the sampled share is off by sqrt(p(1-p)/n)
    (one standard deviation: 2.5 % over 1.6 s on one CPU half busy, 1.1 % over 8 s), taken twice,
    plus two reporting ticks (/proc/stat's 10 ms units) of rounding. With no other work a repeat
    is flagged only when the sampling is off by the threshold plus two standard deviations."""
    span = max(wall_s * max(cpus, 1), 1e-9)
    p = min(max(busy_pct / 100, 0.0), 1.0)
    sampled = 2 * math.sqrt(p * (1 - p) / (KERNEL_HZ * span))
    return 100 * (sampled + 2 * cpustat.TICK_S / span)


def interference_record(
    before: cpustat.CpuTimes,
    after: cpustat.CpuTimes,
    wall_s: float,
    server_cpus: list[int],
    server_own_s: float,
    engine_cpus: list[int],
    engine_own_s: float,
    harness_s: float,
    engine_wait: float | None,
    engine_cpu_fraction: float = 1.0,
) -> Interference:
    """How much of the server's and the engine's CPUs other work took during the repeat. The
    harness itself (sampler, this process) is not pinned: its CPU time is taken off each set's
    other work, so it never flags a repeat by itself. A repeat of any length is judged: other
    work counts as contention when it exceeds the threshold by more than what the clock ticks
    can resolve over the repeat (stated as `resolution_pct`). What one set's ticks demonstrably
    missed of its own processes is not counted as other work on the other set (`_unticked_s`)."""
    sets = {"server": (server_cpus, server_own_s), "engine": (engine_cpus, engine_own_s)}
    uses = {s: cpustat.interference(before, after, c, own, wall_s) for s, (c, own) in sets.items()}
    resolution = {
        s: round(resolution_pct(wall_s, len(c), uses[s].busy_pct), 2) for s, (c, _) in sets.items()
    }
    unticked = _unticked_s(uses, resolution, wall_s)
    spans = {s: max(wall_s * len(c), 1e-9) for s, (c, _) in sets.items()}  # CPU-seconds of a set
    found: dict[str, cpustat.Interference] = {}
    flags = []
    for side, use in uses.items():
        mirror = unticked["engine" if side == "server" else "server"]
        other = max(0.0, use.other_pct - 100 * (harness_s + mirror) / spans[side])
        found[side] = replace(use, other_pct=round(other, 2))
        limit = CONTENDED_PCT + resolution[side]
        if other > limit or use.steal_pct > limit:
            flags.append(
                f"{side} CPUs {use.cpus}: other work {other:.0f} %, stolen {use.steal_pct:.0f} % "
                f"(± {resolution[side]:.1f} % over {wall_s:.2f} s)"
            )
    return Interference(
        harness_cpu_s=round(harness_s, 3),
        server=found["server"],
        engine=found["engine"],
        contended="; ".join(flags) or None,
        # Runnable but not running: the engine wanted its CPU and something else had it (the
        # scheduler's own account, to the nanosecond: judged for repeats of any length).
        engine_waited_pct=None if engine_wait is None else round(100 * engine_wait, 2),
        # An engine that mostly waits on the server (a sleeping app) may wait for its CPU now and
        # then without being held back: starved means it wanted the CPU and could not have it.
        engine_starved=(
            engine_wait is not None
            and 100 * engine_wait > STARVED_WAIT_PCT
            and engine_cpu_fraction + engine_wait >= STARVED_DEMAND
        ),
        resolution_pct=resolution,
        unticked_pct={s: round(100 * v / spans[s], 2) for s, v in unticked.items()},
    )


def _unticked_s(
    uses: dict[str, cpustat.Interference], resolution: dict[str, float], wall_s: float
) -> dict[str, float]:
    """Per set, the CPU seconds of its own processes that its CPUs' ticks did not count, beyond
    what the sampling's resolution explains: the exact own time above the sampled busy time. A
    tick phase-locked to a paced load (an open loop at 128,000 requests/s, measured: the engine's
    CPU counted 12 % less than the engine's own time, the server's 10-12 % more than the server's)
    moves ticks from one set to the other, so what one set demonstrably missed is taken off the
    other set's other work. Nothing is moved between sets that share a CPU."""
    server, engine = uses["server"], uses["engine"]
    if not server.cpus or not engine.cpus or set(server.cpus) & set(engine.cpus):
        return {"server": 0.0, "engine": 0.0}
    found = {}
    for side, use in uses.items():
        missed_pct = use.own_pct - use.busy_pct - resolution[side]
        found[side] = max(0.0, missed_pct) * wall_s * len(use.cpus) / 100
    return found
