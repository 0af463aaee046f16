"""How one repeat is judged: the server crashed, stopped answering or failed too many requests
(disqualified), or the engine was the bottleneck (invalid); otherwise it counts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wsgibench.results.engine_result import EngineResult

if TYPE_CHECKING:
    from wsgibench.run.cell import CellOutcome, ServerHandle


def judge_repeat(
    outcome: CellOutcome, rep: dict[str, Any], server: ServerHandle, error_threshold: float
) -> bool:
    """Record what this repeat says about the cell; True ends the cell."""
    result: EngineResult = rep["engine"]
    gone = server.dead()
    if gone:
        oom = server.cgroup.oom_kills()
        gone += f" (memory limit hit: {oom} OOM kill(s))" if oom else ""
        outcome.disqualify(f"crashed during repeat {rep['idx'] + 1}: {gone}")
        return True
    if rep["ok"] == 0:
        outcome.disqualify(f"stopped answering: 0 valid replies in repeat {rep['idx'] + 1}")
        return True
    if rep["error_rate"] > error_threshold:
        reason = (
            f"error rate {rep['error_rate']:.1%} > "
            f"{error_threshold:.0%} ({result.totals.top_errors(server_only=True)})"
        )
        if result.totals.engine_limit_errors:
            reason += (
                f"; then {result.totals.engine_limit_errors} connects failed on the engine's own "
                "limits: connections piled up behind the overloaded server until the engine "
                "ran out of descriptors or ports"
            )
        outcome.disqualify(reason)
        return True
    if result.skew_exceeded and outcome.status == "measured":
        assert result.start_skew_s is not None and result.start_skew_bound_s is not None
        outcome.status = "invalid"
        outcome.reason = (
            f"load hosts started {1e3 * result.start_skew_s:.1f} ms apart in repeat "
            f"{rep['idx'] + 1}, more than the {1e3 * result.start_skew_bound_s:g} ms bound"
        )
    reasons = saturation_reasons(rep)
    if reasons and outcome.status == "measured":
        outcome.status = "invalid"
        outcome.reason = f"load generator was the bottleneck: {', '.join(reasons)}"
    return False


def saturation_reasons(rep: dict[str, Any]) -> list[str]:
    """Why the engine limited this repeat: its own reasons, and the harness's when other work
    starved the engine of its CPUs (the engine cannot see that; its CPU share only drops). A
    starved repeat is marked saturated."""
    result: EngineResult = rep["engine"]
    reasons = list(result.saturation_reasons) or (["saturated"] if result.saturated else [])
    use = rep.get("extra", {}).get("interference") or {}
    if use.get("engine_starved"):
        engine = use["engine"]
        reasons.append(
            f"engine starved: it waited for its CPU(s) {engine['cpus']} "
            f"{use['engine_waited_pct']:.0f} % of the time, other work took "
            f"{engine['other_pct']:.0f} % of them"
        )
        rep["saturated"] = 1
    rep.setdefault("extra", {})["saturation_reasons"] = reasons
    return reasons
