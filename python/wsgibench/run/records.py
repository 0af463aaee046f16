"""What one repeat stores: the headline numbers from the engine and the sampler, both in full, and
seed 000's check that nothing the plan called for was dropped."""

from __future__ import annotations

from typing import Any

from wsgibench.machine.sampler import Sampler
from wsgibench.results.engine_result import EngineResult


def repeat_record(idx: int, result: EngineResult, sampler: Sampler) -> dict[str, Any]:
    """One stored repeat: headline numbers from the engine and the sampler, plus both in full."""
    totals = result.totals
    ok, errors = totals.ok, totals.error_count
    kind = result.first_kind
    lat = kind.latency if kind else None
    samples = sampler.samples
    inner = samples[1:-1] or samples  # start/end samples carry no CPU interval of the load
    rss = [s.rss_bytes for s in samples]
    conns = [s.conns for s in samples if s.conns is not None]
    cpu = [s.cpu_pct for s in inner]
    return {
        "idx": idx,
        "rps_ok": ok / result.elapsed_s if result.elapsed_s else 0.0,
        "requests": totals.requests_sent,
        "ok": ok,
        "errors": errors,
        "error_rate": errors / (ok + errors) if ok + errors else 0.0,
        "latency_p50_us": lat.p50 if lat else None,
        "latency_p90_us": lat.p90 if lat else None,
        "latency_p99_us": lat.p99 if lat else None,
        "latency_max_us": lat.max if lat else None,
        "cpu_mean_pct": sum(cpu) / len(cpu) if cpu else None,
        "cpu_peak_pct": max(cpu) if cpu else None,
        "rss_start_bytes": rss[0] if rss else None,
        "rss_end_bytes": rss[-1] if rss else None,
        "rss_peak_bytes": max(rss) if rss else None,
        "rss_mean_bytes": int(sum(rss) / len(rss)) if rss else None,
        "conns_peak": max(conns) if conns else None,
        "engine_cpu_s": result.cost.cpu_s,
        "sampler_cpu_s": sampler.own_cpu_s,
        "saturated": int(result.saturated),
        "engine": result,
        "samples": [
            (s.t_s, s.cpu_pct, s.rss_bytes, s.processes, s.conns, s.load1) for s in samples
        ],
    }


def dropped(result: EngineResult) -> dict[str, Any]:
    """Seed 000's check: every request the plan called for was sent and got a valid reply."""
    model, totals = result.model, result.totals
    expected = None
    if model.get("kind") == "sessions":
        expected = round(model["users_per_s"] * model["duration_s"]) * model["requests"]
    elif model.get("kind") == "count":
        expected = model["requests"]
    elif "connections_total" in model:
        expected = model["connections_total"] * model.get("calls", 1)
    sent, ok = totals.requests_sent, totals.ok
    lost = totals.error_count > 0 or ok != sent or (expected is not None and ok != expected)
    return {"expected_requests": expected, "nothing_dropped": not lost}
