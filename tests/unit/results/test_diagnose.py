from dataclasses import replace

from wsgibench.results.diagnose import Facts, diagnose

CLEAN = Facts(
    model="closed",
    level=100,
    wants_keep_alive=True,
    responses=100_000,
    ok=100_000,
    errors=0,
    rps_ok=10_000.0,
    closing_replies=0,
    latency_min_ms=0.5,
    latency_mean_ms=10.0,
    latency_p50_ms=9.0,
    latency_p90_ms=12.0,
    latency_p99_ms=20.0,
    connect_mean_ms=0.1,
    connections_opened=100,
    cpu_mean_pct=99.0,
    cpu_share_pct=100.0,
    listen_drops=0,
    log_bytes=0,
    saturated=False,
)


def codes(*facts):
    return [d.code for d in diagnose(list(facts))]


def test_a_well_configured_server_gets_no_flag():
    assert codes(CLEAN, CLEAN, CLEAN) == []


def test_each_rule():
    assert codes(
        replace(CLEAN, closing_replies=100_000, connections_opened=100_000, latency_mean_ms=9.9)
    ) == ["no-keep-alive"]
    assert codes(replace(CLEAN, listen_drops=37)) == ["listen-overflow"]
    nagle = replace(
        CLEAN,
        latency_min_ms=3.0,
        latency_p50_ms=40.0,
        latency_p90_ms=44.0,
        latency_mean_ms=40.0,
        rps_ok=2500.0,
        cpu_mean_pct=2.0,
    )
    assert "nagle" in codes(nagle)
    # the same latency from queueing keeps the server busy: not Nagle
    assert "nagle" not in codes(replace(nagle, cpu_mean_pct=99.0))
    assert codes(replace(CLEAN, log_bytes=100 * 100_000)) == ["logging"]
    assert "waiting" in codes(replace(CLEAN, cpu_mean_pct=3.0, latency_p99_ms=1000.0))
    saturated = diagnose([replace(CLEAN, saturated=True, saturation_reasons=("cpu 99%",))])
    assert saturated[0].code == "engine-saturated" and saturated[0].invalid


def test_littles_law_catches_impossible_figures():
    # An impossible figure: 10,000 connections, a 0.16 ms mean latency and ~8,000 req/s imply
    # about 1 request in flight, not 10,000 (the waiting requests are missing from the latency).
    bogus = replace(CLEAN, level=10_000, rps_ok=8_000.0, latency_mean_ms=0.16)
    assert codes(bogus) == ["littles-law"]


def test_one_noisy_repeat_is_not_a_trend():
    assert codes(CLEAN, CLEAN, replace(CLEAN, listen_drops=5)) == []
    assert codes(CLEAN, replace(CLEAN, listen_drops=5), replace(CLEAN, listen_drops=3)) == [
        "listen-overflow"
    ]
