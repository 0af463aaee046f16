"""Diagnosis of a measured cell: what makes its number mean something else than it seems, one line each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from wsgibench.results import deaths, latency
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.repeat import Repeat
from wsgibench.results.verdict import Verdict

LITTLE_TOLERANCE = 0.20
NAGLE_MS = (35.0, 50.0)
# Re-sends after unannounced closes above this share of the requests sent flag the cell: each
# is a request the server dropped, which the engine's single re-send hid from the errors.
RESEND_FLAG_SHARE = 0.01


@dataclass(frozen=True)
class Facts:
    """What one repeat tells, read from the engine result and the harness's own counters."""

    model: str
    level: float
    wants_keep_alive: bool
    responses: int
    ok: int
    errors: int
    rps_ok: float
    closing_replies: int  # replies that ended their connection (Connection: close, idle closes)
    latency_min_ms: float
    latency_mean_ms: float
    latency_p50_ms: float
    latency_p90_ms: float
    latency_p99_ms: float
    connect_mean_ms: float
    connections_opened: int
    cpu_mean_pct: float | None
    cpu_share_pct: float  # 100 × the server's CPUs
    listen_drops: int
    log_bytes: int
    saturated: bool
    saturation_reasons: tuple[str, ...] = ()
    contended: str | None = None  # what other work took of the server's or engine's CPUs
    depth: int = 1  # requests in flight per connection (pipelining)
    refused_503: int = 0  # replies 503: work refused at a concurrency limit
    unannounced_closes: int = 0  # keep-alive connections closed after a reply without saying so
    resent: int = 0  # requests re-sent on a new connection because of them
    requests_sent: int = 0
    # every request that ended, per second of the window (replies and failures): Little's law's
    # throughput, beside the latency of the same requests
    ended_rate: float = 0.0
    deaths: str | None = None  # "3 worker processes died: …" (results/deaths.describe)
    lost_with_deaths: int = 0  # requests lost with them (re-sent ones included)

    @property
    def error_rate(self) -> float:
        total = self.ok + self.errors
        return self.errors / total if total else 0.0


@dataclass(frozen=True)
class Diagnosis:
    code: str
    message: str
    invalid: bool = False  # the number must not be read as the server's

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def facts_from(
    repeat: Repeat,
    verdict: Verdict,
    model: str,
    level: float,
    wants_keep_alive: bool,
    cpu_share_pct: float,
) -> Facts:
    """What a repeat tells, from what it recorded and what judging it decided (its verdict)."""
    engine = repeat.engine
    totals = engine.totals
    lat = latency.overall(engine)  # every kind: Little's law counts every request in flight
    counters = repeat.counters
    netstat = counters.netstat if counters is not None else {}
    return Facts(
        model=model,
        level=level,
        wants_keep_alive=wants_keep_alive,
        responses=totals.responses,
        ok=totals.ok,
        errors=totals.error_count,
        rps_ok=float(repeat.rps_ok or 0),
        closing_replies=totals.connection_close_replies + totals.idle_close,
        latency_min_ms=lat.min / 1000 if lat else 0.0,
        latency_mean_ms=lat.mean / 1000 if lat else 0.0,
        latency_p50_ms=lat.p50 / 1000 if lat else 0.0,
        latency_p90_ms=lat.p90 / 1000 if lat else 0.0,
        latency_p99_ms=lat.p99 / 1000 if lat else 0.0,
        connect_mean_ms=_connect_mean_us(engine) / 1000,
        connections_opened=totals.connections_opened,
        cpu_mean_pct=repeat.cpu_mean_pct,
        cpu_share_pct=cpu_share_pct,
        listen_drops=int(netstat.get("ListenOverflows", 0)) + int(netstat.get("ListenDrops", 0)),
        log_bytes=counters.log_bytes if counters is not None else 0,
        saturated=engine.saturated or verdict.saturated,
        saturation_reasons=verdict.saturation_reasons or engine.saturation_reasons,
        contended=counters.interference.contended if counters is not None else None,
        depth=engine.plan.depth,
        refused_503=totals.bad_status_codes.get("503", 0),
        unannounced_closes=totals.unannounced_closes,
        resent=totals.resent,
        requests_sent=totals.requests_sent,
        ended_rate=_ended_rate(repeat, lat.count if lat else 0),
        deaths=_deaths(counters.worker_deaths if counters is not None else None),
        lost_with_deaths=_lost(counters.worker_deaths if counters is not None else None),
    )


def _ended_rate(repeat: Repeat, ended: int) -> float:
    """Requests that ended (every reply and, in a format-2 result, every failure) per second of
    the measured window: the throughput of the requests the latency is of."""
    engine = repeat.engine
    counted = ended if engine.latency_covers_failures else engine.totals.responses
    window = engine.totals.window_s or engine.elapsed_s
    return counted / window if window else 0.0


def _deaths(found: dict[str, Any] | None) -> str | None:
    exits = deaths.exits_of(found or {})
    return deaths.describe(exits) if exits else None


def _lost(found: dict[str, Any] | None) -> int:
    return int(((found or {}).get("lost") or {}).get("requests") or 0)


def _connect_mean_us(engine: EngineResult) -> float:
    """Mean connect time over every kind's connections, weighted by their counts."""
    parts = [k.connect for k in engine.kinds if k.connect is not None and k.connect.count]
    total = sum(p.count for p in parts)
    return sum(p.mean * p.count for p in parts) / total if total else 0.0


def _keep_alive(f: Facts) -> Diagnosis | None:
    if f.wants_keep_alive and f.responses and f.closing_replies > 0.5 * f.responses:
        return Diagnosis(
            "no-keep-alive",
            f"server closed the connection after {f.closing_replies} of "
            f"{f.responses} replies: this is connection-per-request, not keep-alive",
        )
    return None


def _closes_after_n(f: Facts) -> Diagnosis | None:
    """A server that ends each keep-alive connection after a number of requests (Hypercorn's
    keep_alive_max_requests, 1,000 by default): every connection closed at least once on average,
    each after about the same count, so a closed loop at `level` connections ran
    closes x N + level x N/2 requests (the connections still open are halfway on average)."""
    closes = f.closing_replies + f.unannounced_closes
    if f.model not in ("closed", "count"):  # their level is connections; a rate's is not
        return None
    if f.deaths:  # the closes came with dead workers (_died says so), not from a policy
        return None
    if not f.wants_keep_alive or not closes or closes > 0.5 * f.responses or closes < f.level:
        return None  # no closes, a few stray ones, or no keep-alive at all (_keep_alive says so)
    if f.connections_opened < closes:  # a close that no new connection followed: not a limit
        return None
    n = f.responses / (closes + f.level / 2)
    announced = (
        "announced with Connection: close"
        if f.closing_replies >= closes / 2
        else ("without announcing it")
    )
    return Diagnosis(
        "closes-after-n",
        f"server closes keep-alive connections after about {_round2(n):,} requests "
        f"({closes} closes, {announced}, for {f.responses} replies on {f.connections_opened} "
        "connections): a limit of requests per connection; its reconnections are in this number",
    )


def _round2(x: float) -> int:
    """Two significant figures: 952 -> 950, 1,043 -> 1,000, 47.6 -> 48."""
    digits = max(0, len(str(int(x))) - 2)
    return int(round(x, -digits))


def _backlog(f: Facts) -> Diagnosis | None:
    if f.listen_drops > 0:
        return Diagnosis(
            "listen-overflow",
            f"this machine's kernel dropped {f.listen_drops} connection attempts on a full "
            "listen queue (ListenOverflows counts every listener here, most likely this "
            "server's): backlog too small (server setting or somaxconn)",
        )
    return None


def _nagle(f: Facts) -> Diagnosis | None:
    # Replies that take ~40 ms while the server idles: queueing would keep its CPU busy.
    low, high = NAGLE_MS
    idle = f.cpu_mean_pct is not None and f.cpu_mean_pct < 0.5 * f.cpu_share_pct
    if f.ok and idle and low <= f.latency_p50_ms <= high and f.latency_p90_ms < high + 10:
        return Diagnosis(
            "nagle",
            f"replies take ~40 ms (p50 {f.latency_p50_ms:.1f} ms) while the "
            "server idles: Nagle's algorithm meets delayed ACK; it needs TCP_NODELAY",
        )
    return None


def _logging(f: Facts) -> Diagnosis | None:
    if f.responses and f.log_bytes >= 10 * f.responses:
        return Diagnosis(
            "logging",
            f"server wrote {f.log_bytes / f.responses:.0f} bytes of log per "
            "request: access logging is on, and it is part of this number",
        )
    return None


def _waiting(f: Facts) -> Diagnosis | None:
    # Other work on its CPUs explains a server's low share as well as waiting does: not said.
    if f.cpu_mean_pct is None or f.saturated or f.contended:
        return None
    struggling = f.latency_p99_ms > 100 or f.error_rate > 0.01
    if struggling and f.cpu_mean_pct < 0.5 * f.cpu_share_pct:
        return Diagnosis(
            "waiting",
            f"server used {f.cpu_mean_pct:.0f} % CPU of its "
            f"{f.cpu_share_pct:.0f} % while p99 was {f.latency_p99_ms:.0f} ms and errors "
            f"{f.error_rate:.1%}: it waits (sleeping app, too few workers, a lock) or "
            "the client is the bottleneck",
        )
    return None


def _saturated(f: Facts) -> Diagnosis | None:
    if f.saturated:
        why = ", ".join(f.saturation_reasons) or "saturated"
        return Diagnosis(
            "engine-saturated",
            f"the load generator was the bottleneck ({why}): "
            "the number is the engine's, not the server's",
            invalid=True,
        )
    return None


def _little(f: Facts) -> Diagnosis | None:
    # Errors do not excuse a mismatch: requests that wait to time out are missing from the
    # latency, which is how a sub-millisecond mean comes about at thousands of connections.
    if f.model not in ("closed", "count") or not f.rps_ok or not f.ok:
        return None
    new_conn_share = min(1.0, f.connections_opened / f.responses) if f.responses else 0.0
    wait_s = (f.latency_mean_ms + new_conn_share * f.connect_mean_ms) / 1000
    # Every request that ended, at the rate it ended, with its latency: a fast 500 or a
    # timeout is a request in flight as much as a valid reply is.
    rate = f.ended_rate or f.rps_ok
    implied, expected = rate * wait_s, f.level * f.depth
    if abs(implied - expected) > LITTLE_TOLERANCE * expected:
        held = f"{f.level:g} connections" + (f" × {f.depth} in flight" if f.depth > 1 else "")
        return Diagnosis(
            "littles-law",
            f"{held}, but throughput × mean latency = "
            f"{implied:.0f} in flight: the numbers disagree by more than 20 %",
        )
    return None


def _refused(f: Facts) -> Diagnosis | None:
    if f.refused_503:
        return Diagnosis(
            "refused-503",
            f"{f.refused_503} replies were 503 Service Unavailable: the server refused work at a "
            "concurrency limit of its own (counted as bad_status errors), it did not fail",
        )
    return None


def _unannounced(f: Facts) -> Diagnosis | None:
    if f.unannounced_closes and not f.deaths:
        return Diagnosis(
            "unannounced-close",
            "server closes keep-alive connections without announcing it "
            f"({f.unannounced_closes} of {f.connections_opened} connections): the {f.resent} "
            "requests caught by a close were re-sent on a new connection, as HTTP clients do "
            "(RFC 9112 §9.3.1), and are not errors",
        )
    return None


def _died(f: Facts) -> Diagnosis | None:
    if f.deaths:
        lost = (
            f"; {f.lost_with_deaths:,} requests lost with them, re-sent ones counted as errors"
            if f.lost_with_deaths
            else ""
        )
        return Diagnosis(
            "worker-deaths",
            f"{f.deaths} while the load ran{lost}: the server replaced them (or ran on without "
            "them), and the number includes that; it is not a clean measurement",
            invalid=True,
        )
    return None


def _resends(f: Facts) -> Diagnosis | None:
    share = f.resent / f.requests_sent if f.requests_sent else 0.0
    if share > RESEND_FLAG_SHARE:
        return Diagnosis(
            "many-resends",
            f"{f.resent:,} requests ({share:.1%} of those sent) were re-sent after the server "
            f"closed their connection without a reply, above the {RESEND_FLAG_SHARE:.0%} that "
            "an idle-connection policy explains: each was a request the server dropped",
        )
    return None


def _contended(f: Facts) -> Diagnosis | None:
    if f.contended:
        return Diagnosis(
            "contended",
            f"other work ran on this cell's CPUs ({f.contended}): "
            "the machine was not the study's alone, the number is lower than it would be",
        )
    return None


RULES: tuple[Callable[[Facts], Diagnosis | None], ...] = (
    _died,
    _resends,
    _contended,
    _unannounced,
    _refused,
    _saturated,
    _keep_alive,
    _closes_after_n,
    _backlog,
    _nagle,
    _logging,
    _waiting,
    _little,
)


def diagnose(repeats: list[Facts]) -> list[Diagnosis]:
    """A diagnosis stands when at least half of the repeats show it (one noisy repeat is not a trend);
    engine saturation, contention, worker deaths and many re-sends count from a single repeat."""
    found: dict[str, list[Diagnosis]] = {}
    for facts in repeats:
        for rule in RULES:
            d = rule(facts)
            if d:
                found.setdefault(d.code, []).append(d)
    need = max(1, (len(repeats) + 1) // 2)
    # one repeat is enough to say so
    once = ("engine-saturated", "contended", "worker-deaths", "many-resends")
    return [ds[0] for code, ds in found.items() if code in once or len(ds) >= need]
