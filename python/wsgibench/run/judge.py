"""How one repeat is judged: the server crashed, stopped answering or failed too many requests
(disqualified); the engine was the bottleneck or a limit stopped holding (invalid); other work
took its CPUs (contended); its processes died (worker deaths); otherwise it counts. Judging
returns a `Verdict` and changes nothing: the cell applies it (run/outcome.py)."""

from __future__ import annotations

from typing import Any

from wsgibench.results import deaths
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.repeat import Repeat
from wsgibench.results.verdict import BOTTLENECK, CONTENDED, SKEW, STARVED, CellStatus, Verdict
from wsgibench.results.wrong_replies import escaped
from wsgibench.run.outcome import ServerHandle


def judge_repeat(rep: Repeat, server: ServerHandle, error_threshold: float) -> Verdict:
    """What this repeat says of the cell; a disqualified verdict ends it. The order: what the
    server did beyond doubt (crashed, spoke no protocol the load needs, answered every request
    wrongly, or more than the threshold wrongly in ways no engine limit causes: BEYOND_DOUBT);
    then the limits of the harness and the machine (a limit that no longer holds, the engine
    saturated or starved, load hosts apart, other work on the CPUs), which make the repeat's
    other errors unattributable; only then the server's errors and its processes' deaths."""
    result = rep.engine
    gone = server.dead()
    if gone:
        oom = server.cgroup.oom_kills()
        gone += f" (memory limit hit: {oom} OOM kill(s))" if oom else ""
        return _disqualified(rep, f"crashed during repeat {rep.idx + 1}: {gone}")
    refused = websocket_refused(rep) or http2_refused(rep) or h2_alpn_refused(rep)
    if refused:
        return Verdict(CellStatus.UNAVAILABLE, refused, saturated=rep.saturated)
    tls = result.tls
    if rep.ok == 0 and tls is not None and tls.failures:
        failed = tls.describe_failures()
        return _disqualified(rep, f"TLS failed in repeat {rep.idx + 1}: {failed}")
    if rep.ok == 0 and result.totals.responses:  # it answered, wrongly every time
        return _disqualified(
            rep,
            f"no valid reply in repeat {rep.idx + 1}: {result.totals.responses:,} replies, every "
            f"one an error ({result.totals.top_errors(server_only=True)}){first_wrong(result)}",
        )
    wrong = _wrong_beyond_doubt(rep)
    if wrong > error_threshold:
        return _disqualified(rep, _error_reason(rep, error_threshold) + _also_limited(rep))
    limited = _limited(rep, server)
    if limited is not None:
        return limited
    if rep.ok == 0:
        return _disqualified(rep, f"stopped answering: 0 valid replies in repeat {rep.idx + 1}")
    if rep.error_rate > error_threshold:
        return _disqualified(rep, _error_reason(rep, error_threshold))
    died = _deaths(rep)
    return Verdict(
        CellStatus.DEATHS if died else CellStatus.MEASURED,
        died,
        saturated=False,
        saturation_reasons=(),
    )


# Error classes no limit of the engine or the machine can cause: the server's replies were wrong,
# or it refused or reset the connection itself. Over the threshold on their own, the server is
# judged before the engine's limits (a starved engine makes requests late, never their replies
# wrong); timeouts and closes stay unattributable while the engine was limited.
BEYOND_DOUBT = (
    "bad_status",
    "bad_body",
    "protocol_error",
    "connect_refused",
    "reset",
    "stream_reset",
)


def _wrong_beyond_doubt(rep: Repeat) -> float:
    """The share of the server's answers that were wrong beyond doubt (as `error_rate`'s)."""
    totals = rep.engine.totals
    wrong = sum(totals.errors.get(c, 0) for c in BEYOND_DOUBT)
    caused = rep.errors - totals.engine_limit_errors  # error_rate's: re-sent requests counted
    return wrong / (rep.ok + caused) if rep.ok + caused else 0.0


def _also_limited(rep: Repeat) -> str:
    reasons = saturation_reasons(rep)
    return (
        f" (judged before the load's own limit, which cannot cause them: {', '.join(reasons)})"
        if reasons
        else ""
    )


def _limited(rep: Repeat, server: ServerHandle) -> Verdict | None:
    """The repeat as the harness or the machine limited it (invalid, or contended), or None."""
    changed = server.limits_changed()
    if changed is not None:
        return Verdict(
            CellStatus.INVALID,
            f"{changed} (after repeat {rep.idx + 1})",
            saturated=rep.saturated or _starved(rep),
            saturation_reasons=tuple(saturation_reasons(rep)),
        )
    result = rep.engine
    why = _skew_reason(result, rep.idx) if result.skew_exceeded else None
    reasons = saturation_reasons(rep)
    if reasons and why is None:
        why = f"{BOTTLENECK}{', '.join(reasons)}"
        if rep.error_rate and result.totals.engine_limit_errors:
            why += (
                f"; the server's errors ({rep.error_rate:.1%}: "
                f"{result.totals.top_errors(server_only=True)}) came with it: connections piled "
                "up behind a slow server until the engine ran out of descriptors or ports, so "
                "neither is judged (fewer connections, or more descriptors, would tell)"
            )
        elif rep.error_rate:
            why += f" (the server's errors, {rep.error_rate:.1%}, are not judged: the load was not)"
    if why:
        return Verdict(
            CellStatus.INVALID,
            why,
            saturated=rep.saturated or _starved(rep),
            saturation_reasons=tuple(reasons),
        )
    use = rep.counters.interference if rep.counters is not None else None
    if use is not None and use.contended:
        return Verdict(
            CellStatus.CONTENDED,
            f"{CONTENDED}repeat {rep.idx + 1}: {use.contended}",
            saturation_reasons=(),
        )
    return None


def _error_reason(rep: Repeat, error_threshold: float) -> str:
    result = rep.engine
    lost = _lost(rep)
    reason = (
        f"error rate {rep.error_rate:.1%} > "
        f"{error_threshold:.0%} ({result.totals.top_errors(server_only=True)}"
        + (f", worker_lost {lost}" if lost else "")
        + ")"
        + first_wrong(result)
    )
    if result.totals.engine_limit_errors:
        reason += (
            f"; then {result.totals.engine_limit_errors} connects failed on the engine's own "
            "limits: connections piled up behind the overloaded server until the engine "
            "ran out of descriptors or ports"
        )
    died = _deaths(rep)
    return reason + (f"; {died}" if died else "")


def _stored_deaths(rep: Repeat) -> dict[str, Any]:
    found = rep.counters.worker_deaths if rep.counters is not None else None
    return found or {}


def _lost(rep: Repeat) -> int:
    return int((_stored_deaths(rep).get("lost") or {}).get("requests") or 0)


def _deaths(rep: Repeat) -> str | None:
    """ "3 worker processes died during repeat 2: …; 140 requests lost with them (120 re-sent)"."""
    found = _stored_deaths(rep)
    exits = deaths.exits_of(found)
    if not exits:
        return None
    lost = found.get("lost") or {}
    text = deaths.describe(exits).replace(":", f" during repeat {rep.idx + 1}:", 1)
    if lost.get("requests"):
        text += (
            f"; {lost['requests']:,} requests lost with them ({lost.get('resent', 0):,} the "
            "engine re-sent, counted as errors)"
        )
    return text


# The engine's CPU share above which a measured cell says the engine came close to its limit
# (saturation itself is 95 % in most of the seconds: the engine's own judgement).
ENGINE_NEAR_LIMIT = 0.85


def engine_headroom(repeats: list[Repeat]) -> str | None:
    """A note when the engine ran close to its own limit in a repeat that counted: its CPU share,
    its backend and its efficiency, so that a reader knows a faster server would have met the
    engine's limit first. None when it had room."""
    counted = [r for r in repeats if not r.saturated]
    if not counted:
        return None
    busiest = max(counted, key=lambda r: r.engine.cost.cpu_fraction)
    cost = busiest.engine.cost
    if cost.cpu_fraction < ENGINE_NEAR_LIMIT:
        return None
    per_cpu = busiest.engine.totals.responses / cost.cpu_s if cost.cpu_s > 0 else 0.0
    backend = f" on {cost.io_backend}" if cost.io_backend else ""
    return (
        f"engine close to its limit: {cost.cpu_fraction:.0%} of its CPU(s){backend} in repeat "
        f"{busiest.idx + 1} ({per_cpu:,.0f} responses per engine CPU-second); a faster server "
        "would have met the engine's limit"
    )


def websocket_refused(rep: Repeat) -> str | None:
    """A WebSocket load whose every upgrade failed: the server (or the app it serves) does not
    speak WebSocket here, which is not a failure under load. Why, from the engine's reasons and
    the statuses the server gave; None when an upgrade succeeded or the load is HTTP."""
    ws = rep.engine.websocket
    why = ws.refusal() if ws is not None else None
    if ws is None or why is None:
        return None
    return (
        f"does not speak WebSocket here: all {ws.failed} upgrades failed in repeat "
        f"{rep.idx + 1} ({why})"
    )


def http2_refused(rep: Repeat) -> str | None:
    """An HTTP/2 load on which no connection got the server's SETTINGS and nothing was answered:
    the server does not speak HTTP/2 with prior knowledge (h2c), which is not a failure under
    load. None when it does, or the load is not HTTP/2."""
    h2 = rep.engine.http2
    why = h2.refusal() if h2 is not None and rep.ok == 0 else None
    if why is None:
        return None
    return f"does not speak HTTP/2 with prior knowledge (h2c) here: {why} in repeat {rep.idx + 1}"


def h2_alpn_refused(rep: Repeat) -> str | None:
    """An h2 load over TLS on which nothing was answered and ALPN never chose h2: the server
    does not speak HTTP/2 over TLS here (uvicorn offers HTTP/1.1 only), not a failure under
    load."""
    tls = rep.engine.tls
    why = tls.alpn_refusal() if tls is not None and rep.ok == 0 else None
    if why is None:
        return None
    return f"does not speak HTTP/2 over TLS here: {why} in repeat {rep.idx + 1}"


def _disqualified(rep: Repeat, reason: str) -> Verdict:
    """The server's fault: judging stops here, the engine's saturation as it said it."""
    return Verdict(CellStatus.DISQUALIFIED, reason, saturated=rep.saturated)


def _starved(rep: Repeat) -> bool:
    return rep.counters is not None and rep.counters.interference.engine_starved


def _stolen(steal_pct: float) -> str:
    """The hypervisor's share, when it took enough to say: on a shared VM it is the usual cause
    (a vCPU descheduled between the engine's wake-ups), and no process on this machine is."""
    return f" and the hypervisor took {steal_pct:.0f} % (steal)" if steal_pct >= 1 else ""


def saturation_reasons(rep: Repeat) -> list[str]:
    """Why the engine limited this repeat: its own reasons, and the harness's when other work
    starved the engine of its CPUs (the engine cannot see that; its CPU share only drops). A
    starved repeat is judged saturated."""
    result = rep.engine
    reasons = list(result.saturation_reasons) or (["saturated"] if result.saturated else [])
    use = rep.counters.interference if rep.counters is not None else None
    if use is not None and use.engine_starved:
        reasons.append(
            f"{STARVED}it waited for its CPU(s) {list(use.engine.cpus)} "
            f"{use.engine_waited_pct:.0f} % of the time, other work took "
            f"{use.engine.other_pct:.0f} % of them{_stolen(use.engine.steal_pct)}"
        )
    return reasons


def _skew_reason(result: EngineResult, idx: int) -> str:
    """Hosts started too far apart: by how much, and why the last one was late where it said."""
    assert result.start_skew_s is not None and result.start_skew_bound_s is not None
    known = (
        f" (± {1e3 * result.start_skew_uncertainty_s:.1f} ms: the clocks' offsets)"
        if result.start_skew_uncertainty_s
        else ""
    )
    why = (
        f"{SKEW}{1e3 * result.start_skew_s:.1f} ms apart{known} in repeat {idx + 1}, more than "
        f"the {1e3 * result.start_skew_bound_s:g} ms bound"
    )
    if not result.load_hosts:
        return why
    last = max(result.load_hosts, key=lambda h: h.start_after_first_s)
    margin, late = last.start_margin_s, last.began_late_s
    if margin is not None and margin < 0:
        return f"{why}: the start reached {last.address} {-1e3 * margin:.1f} ms after its instant"
    if late is not None and margin is not None and late > result.start_skew_bound_s / 2:
        return (
            f"{why}: {last.address} had the start {1e3 * margin:.0f} ms ahead, and its engine "
            f"began {1e3 * late:.1f} ms after the instant (its CPUs were busy)"
        )
    return why


def first_wrong(result: EngineResult) -> str:
    """The first quoted reply of the commonest wrong class, escaped: "; first bad_body (kind
    pong): json items.4.id: got 7, expected 8"; "" when none was quoted."""
    found = sorted(result.wrong_replies, key=lambda w: -result.totals.errors.get(w.error, 0))
    if not found:
        return ""
    w = found[0]
    return f"; first {w.error} (kind {escaped(w.kind)}): {escaped(w.reason)}"
