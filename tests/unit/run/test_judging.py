"""The runner's judging on a fake engine: measured, invalid, disqualified, and each diagnosis, with
exact reasons and no server or engine process."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from wsgibench.databases import LoadDatabase
from wsgibench.machine.cpustat import CpuTimes
from wsgibench.machine.topology import build, layout
from wsgibench.run.cell import CellContext, Placement, measure
from wsgibench.run.checks import Capabilities
from wsgibench.study.model import parse_study
from wsgibench.study.plan import plan_cells

from .fakes import FakeCgroup, FakeEngine, FakeServer, recorded, result

GOOD = Capabilities(pong=True, http10=True, keep_alive=True, pipelining=True, detail="")
PLACED = Placement(server_cpus=[0], engine_cpus=[1], workers=1, policy="first-cpu")


def idle_cpus() -> CpuTimes:
    return CpuTimes({0: 0.0, 1: 0.0}, {0: 0.0, 1: 0.0})


def _measure(
    tmp_path: Path,
    results,
    server=None,
    caps=GOOD,
    repeats=3,
    level=10,
    cpu_times=idle_cpus,
    threshold=0.05,
    watch=None,
    **load,
):
    study = parse_study(
        {
            "servers": ["nginx-baseline"],
            "repeats": repeats,
            "error_threshold": threshold,
            "load": [
                {
                    "name": "c",
                    "model": "closed",
                    "levels": [level],
                    "duration_s": 1,
                    "warmup_s": 0.5,
                    **load,
                }
            ],
        },
        "judging",
    )
    engine = FakeEngine(list(results))
    topo = build([0, 1], [(0,), (1,)], [(0, 1)])
    ctx = CellContext(
        study, engine, LoadDatabase(tmp_path), layout(topo), topo, cpu_times=cpu_times
    )
    if watch is not None:
        ctx.watch = watch
    outcome = measure(plan_cells(study)[0], server or FakeServer(), caps, ctx, PLACED)
    return outcome, engine


def _codes(outcome) -> set[str]:
    return {d["code"] for d in outcome.diagnoses}


def test_a_good_server_is_measured_over_every_repeat(tmp_path):
    # 10 connections, 10,000 replies/s at 1 ms each: Little's law holds exactly.
    outcome, engine = _measure(tmp_path, [result(ok=10_000, mean_us=1000)])
    assert (outcome.status, outcome.reason) == ("measured", None)
    assert len(outcome.repeats) == 3 and [r.idx for r in outcome.repeats] == [0, 1, 2]
    assert outcome.repeats[0].rps_ok == 10_000 and outcome.repeats[0].error_rate == 0
    assert _codes(outcome) == set()
    # a warm-up, then one plan per repeat, each with its own seed
    assert len(engine.plans) == 4
    assert len({p.seed for p in engine.plans[1:]}) == 3
    assert engine.plans[0].model.duration_s == 0.5


def test_errors_over_the_threshold_disqualify_and_end_the_cell(tmp_path):
    outcome, engine = _measure(tmp_path, [result(ok=900, errors={"timeout": 80, "reset": 20})])
    assert outcome.status == "disqualified"
    assert outcome.reason == "error rate 10.0% > 5% (timeout 80, reset 20)"
    assert len(outcome.repeats) == 1 and len(engine.plans) == 2


def test_errors_under_the_threshold_are_measured(tmp_path):
    outcome, _ = _measure(tmp_path, [result(ok=9_990, errors={"timeout": 10}, mean_us=1000)])
    assert outcome.status == "measured" and outcome.repeats[0].errors == 10


def test_a_saturated_engine_makes_the_cell_invalid(tmp_path):
    saturated = result(ok=10_000, mean_us=1000, saturated=True, reasons=("engine CPU 99 %",))
    outcome, _ = _measure(tmp_path, [saturated])
    assert outcome.status == "invalid"
    assert outcome.reason == "load generator was the bottleneck: engine CPU 99 %"
    diagnosis = next(d for d in outcome.diagnoses if d["code"] == "engine-saturated")
    assert diagnosis["invalid"] is True and "engine CPU 99 %" in diagnosis["message"]
    assert len(outcome.repeats) == 3  # invalid, but every repeat is kept


def test_saturation_in_one_repeat_is_enough(tmp_path):
    fine, saturated = (
        result(ok=10_000, mean_us=1000),
        result(ok=10_000, mean_us=1000, saturated=True),
    )
    outcome, _ = _measure(tmp_path, [fine, saturated, fine])
    assert outcome.status == "invalid" and "engine-saturated" in _codes(outcome)


def test_a_crash_disqualifies_with_the_exit_and_the_oom_kills(tmp_path):
    server = FakeServer(dies_after=1, cgroup=FakeCgroup(kills=2))
    outcome, _ = _measure(tmp_path, [result(ok=10_000, mean_us=1000)], server=server)
    assert outcome.status == "disqualified"
    assert outcome.reason == (
        "crashed during repeat 2: server process exited with code 3: "
        "fault: crashing (memory limit hit: 2 OOM kill(s))"
    )
    assert outcome.notes == ["memory limit hit: 2 OOM kill(s)"]


def test_no_valid_reply_disqualifies(tmp_path):
    outcome, _ = _measure(tmp_path, [result(ok=0, errors={"timeout": 10})])
    assert outcome.status == "disqualified"
    assert outcome.reason == "stopped answering: 0 valid replies in repeat 1"


def test_a_wrong_answer_is_disqualified_before_any_load(tmp_path):
    wrong = Capabilities(False, True, True, True, "pong: got [(200, b'Pang!')]")
    outcome, engine = _measure(tmp_path, [result()], caps=wrong)
    assert outcome.status == "disqualified" and engine.plans == []
    assert outcome.reason == "wrong answer to a plain request: pong: got [(200, b'Pang!')]"


def test_no_keep_alive_is_measured_per_request_and_said(tmp_path):
    caps = Capabilities(True, True, keep_alive=False, pipelining=False, detail="")
    outcome, engine = _measure(tmp_path, [result(ok=10_000, mean_us=1000)], caps=caps)
    assert outcome.status == "measured"
    assert all(p.http.keep_alive is False for p in engine.plans)
    assert _codes(outcome) == {"no-keep-alive"}


def test_a_websocket_load_keeps_its_connections_even_where_http_keep_alive_fails(tmp_path):
    caps = Capabilities(True, True, keep_alive=False, pipelining=False, detail="")
    outcome, engine = _measure(
        tmp_path, [result(ok=10_000, mean_us=1000)], caps=caps, protocol="websocket"
    )
    assert outcome.status == "measured"
    assert all(p.http.keep_alive and p.websocket_message_bytes == 64 for p in engine.plans)
    assert "no-keep-alive" not in _codes(outcome)


def test_an_h2c_load_sends_its_streams_over_kept_connections(tmp_path):
    caps = Capabilities(True, True, keep_alive=False, pipelining=False, detail="")
    outcome, engine = _measure(
        tmp_path,
        [result(ok=100_000, mean_us=1000, plan={"http2": {"streams": 10}})],
        caps=caps,
        protocol="h2c",
        streams=10,
    )
    assert outcome.status == "measured"
    assert all(p.http.keep_alive and p.http2_streams == 10 for p in engine.plans)
    assert all(p.to_dict()["http2"] == {"streams": 10} for p in engine.plans)
    # 10 connections x 10 streams: 100 in flight, as 100,000 replies/s at 1 ms say.
    assert "littles-law" not in _codes(outcome)


@pytest.mark.parametrize(
    ("run", "code"),
    [
        # 100 connections but throughput x latency = 10 in flight
        (dict(results=[result(ok=10_000, mean_us=1000)], level=100), "littles-law"),
        # 20 bytes of log per reply
        (
            dict(
                results=[result(ok=10_000, mean_us=1000)],
                server=FakeServer(log_bytes_per_call=200_000),
            ),
            "logging",
        ),
        # every reply closed its connection on a keep-alive load
        (dict(results=[result(ok=10_000, mean_us=1000, close_replies=10_000)]), "no-keep-alive"),
        # ~40 ms replies from a server that does nothing: Nagle meets delayed ACK
        (dict(results=[result(ok=250, mean_us=40_000, p50_us=40_000, p99_us=42_000)]), "nagle"),
    ],
    ids=["littles-law", "logging", "closes-keep-alive", "nagle"],
)
def test_each_diagnosis(tmp_path, run, code):
    outcome, _ = _measure(tmp_path, **run)
    assert code in _codes(outcome), outcome.diagnoses
    assert outcome.status == "measured"


def cpu_readings(busy_cpu0: float = 0.0, steal_cpu1: float = 0.0):
    """/proc/stat as other work leaves it: each reading later by that many seconds of CPU 0 busy
    time (a busy loop on the server's CPU) and of CPU 1 steal (a hypervisor that descheduled the
    engine's); nothing the fake server's processes used."""
    readings = iter(range(1000))

    def read() -> CpuTimes:
        n = next(readings)
        return CpuTimes({0: n * busy_cpu0, 1: 0.0}, {0: 0.0, 1: n * steal_cpu1})

    return read


def test_other_work_on_the_servers_cpu_is_flagged_contended(tmp_path):
    # Each repeat's before/after readings differ by 5 CPU-seconds on CPU 0; the repeat lasts
    # however long the fake engine takes (milliseconds), so other work is far over 5 %.
    outcome, _ = _measure(tmp_path, [result(ok=10_000, mean_us=1000)], cpu_times=cpu_readings(5.0))
    # Contended is a status: the number is shown with its reason, never ranked.
    assert "contended" in _codes(outcome) and outcome.status == "contended"
    assert outcome.reason.startswith("other work on the CPUs in repeat 1: server CPUs (0,)")
    use = outcome.repeats[0].counters.interference
    assert use.server.cpus == (0,) and use.server.other_pct > 5
    assert use.contended.startswith("server CPUs (0,)")
    assert use.engine.other_pct == 0 and not use.engine_starved


def test_an_engine_that_waited_for_its_cpu_is_starved_and_the_cell_invalid(tmp_path):
    # 1 s run, 0.3 s runnable but not running: the engine could not ask as fast as it would.
    starved = replace(result(ok=10_000, mean_us=1000), runqueue_wait_s=0.3)
    outcome, _ = _measure(tmp_path, [starved])
    assert outcome.status == "invalid"
    assert outcome.reason.startswith(
        "load generator was the bottleneck: engine starved: it "
        "waited for its CPU(s) [1] 30 % of the time"
    )
    assert all(r.saturated for r in outcome.repeats)
    assert "engine-saturated" in _codes(outcome)


def test_a_starved_engine_names_the_hypervisor_when_it_took_the_cpu(tmp_path):
    starved = replace(result(ok=10_000, mean_us=1000), runqueue_wait_s=0.3)
    outcome, _ = _measure(tmp_path, [starved], cpu_times=cpu_readings(steal_cpu1=0.3))
    assert outcome.status == "invalid"
    assert "other work took 0 % of them and the hypervisor took" in outcome.reason
    assert outcome.repeats[0].counters.interference.engine.steal_pct > 5
    plain, _ = _measure(tmp_path / "plain", [starved])  # no steal: no hypervisor named
    assert "hypervisor" not in plain.reason


def test_a_little_run_queue_wait_is_not_starvation(tmp_path):
    fine = replace(result(ok=10_000, mean_us=1000), runqueue_wait_s=0.01)
    outcome, _ = _measure(tmp_path, [fine])
    assert outcome.status == "measured" and not outcome.repeats[0].saturated


def test_every_kind_counts_in_the_headline_latency_and_littles_law(tmp_path):
    # seed 001's head-of-line mix on 10 connections for 1 s: 5 of them wait 1 s for /slow (5
    # replies), 5 get /fast in 1 ms (5,000 replies). In flight: 5 x 1 s + 5,000 x 1 ms = 10.
    mixed = result(kinds=[recorded("slow", 5, 1_000_000), recorded("fast", 5_000, 1_000)])
    outcome, _ = _measure(tmp_path, [mixed], repeats=1)
    assert outcome.status == "measured" and "littles-law" not in _codes(outcome)
    rep = outcome.repeats[0]
    assert rep.latency_p50_us == 1000 and rep.latency_max_us == pytest.approx(1e6, rel=1e-3)
    kinds = rep.counters.kinds
    assert kinds["slow"]["p50_us"] == 1_000_000 and kinds["fast"]["p50_us"] == 1000
    assert (kinds["slow"]["ok"], kinds["fast"]["ok"]) == (5, 5000)


def test_littles_law_counts_pipelined_requests(tmp_path):
    # 10 connections with 4 pipelined requests each: 40 in flight; 40,000 replies/s at 1 ms.
    plan = {"model": {"kind": "closed", "connections": 10, "duration_s": 1, "pipeline": 4}}
    outcome, _ = _measure(tmp_path, [result(ok=40_000, mean_us=1000, plan=plan)], repeats=1)
    assert "littles-law" not in _codes(outcome)
    # the same figures without pipelining disagree by a factor of 4
    outcome, _ = _measure(tmp_path, [result(ok=40_000, mean_us=1000)], repeats=1)
    assert "littles-law" in _codes(outcome)


def test_the_engines_own_limits_make_the_cell_invalid_not_the_server_disqualified(tmp_path):
    # 2 % of connects failed on the engine's descriptor limit; the server failed 10 of 9,810.
    limited = result(
        ok=9_800,
        errors={"fd_limit": 200, "timeout": 10},
        mean_us=1000,
        saturated=True,
        reasons=("engine hit its file-descriptor limit (1024) 200 times",),
    )
    outcome, _ = _measure(tmp_path, [limited])
    assert outcome.status == "invalid", outcome.reason
    assert outcome.reason == (
        "load generator was the bottleneck: engine hit its file-descriptor limit (1024) 200 times; "
        "the server's errors (0.1%: timeout 10) came with it: connections piled up behind a slow "
        "server until the engine ran out of descriptors or ports, so neither is judged (fewer "
        "connections, or more descriptors, would tell)"
    )
    assert outcome.repeats[0].error_rate == pytest.approx(10 / 9_810)
    assert outcome.repeats[0].errors == 210


def test_throughput_is_over_the_measured_window_not_the_drain(tmp_path):
    # 5 s window, 50,000 replies in it; one stuck connection kept the run going 5 s longer.
    stuck = result(
        ok=50_001,
        mean_us=1000,
        elapsed_s=10.0,
        totals={"window_s": 5.0, "ok_in_window": 50_000, "completed_after_window": 1},
    )
    outcome, _ = _measure(tmp_path, [stuck], repeats=1)
    rep = outcome.repeats[0]
    assert rep.rps_ok == 10_000  # not 50,001 / 10 s
    assert rep.counters.window.completed_after_window == 1


def test_unannounced_closes_are_said_and_not_errors(tmp_path):
    closes = result(
        ok=10_000, mean_us=1000, connections=110, totals={"unannounced_closes": 100, "resent": 100}
    )
    outcome, _ = _measure(tmp_path, [closes])
    assert outcome.status == "measured" and outcome.repeats[0].errors == 0
    (said,) = [d for d in outcome.diagnoses if d["code"] == "unannounced-close"]
    assert "without announcing it (100 of 110 connections)" in said["message"]


def test_an_engine_that_mostly_waits_on_the_server_is_not_starved(tmp_path):
    # A sleeping app: the engine used 5 % of its CPU and waited for it 20 % of the time, so it
    # wanted a quarter of a CPU at most and had it; other work on its CPU is said, not fatal.
    base = result(ok=200, mean_us=1000)
    idle = replace(base, runqueue_wait_s=0.2, cost=replace(base.cost, cpu_fraction=0.05))
    outcome, _ = _measure(tmp_path, [idle], level=1)
    assert outcome.status == "measured" and not outcome.repeats[0].saturated


def test_503_from_a_concurrency_limit_is_its_own_kind(tmp_path):
    limited = result(ok=9_900, errors={"bad_status": 100}, mean_us=1000)
    limited = replace(limited, totals=replace(limited.totals, bad_status_codes={"503": 100}))
    outcome, _ = _measure(tmp_path, [limited], repeats=1)
    (said,) = [d for d in outcome.diagnoses if d["code"] == "refused-503"]
    assert said["message"].startswith("100 replies were 503 Service Unavailable")


def test_a_limit_of_requests_per_keep_alive_connection_is_recognised(tmp_path):
    # 10 connections, 10,000 replies, 15 closes announced with Connection: close, each followed
    # by a new connection: 15 x N + 10 x N/2 = 10,000, N = 500.
    limited = result(ok=10_000, mean_us=1000, close_replies=15, connections=25)
    outcome, _ = _measure(tmp_path, [limited])
    assert outcome.status == "measured"
    (said,) = [d for d in outcome.diagnoses if d["code"] == "closes-after-n"]
    assert said["message"].startswith(
        "server closes keep-alive connections after about 500 requests "
        "(15 closes, announced with Connection: close, for 10000 replies on 25 connections)"
    )
    assert "no-keep-alive" not in _codes(outcome)


def test_unannounced_closes_after_n_requests_are_recognised_too(tmp_path):
    # 30 closes without Connection: close over 10,000 replies: N = 10,000 / 35 = 286 -> 290
    quiet = result(
        ok=10_000, mean_us=1000, connections=40, totals={"unannounced_closes": 30, "resent": 30}
    )
    outcome, _ = _measure(tmp_path, [quiet])
    (said,) = [d for d in outcome.diagnoses if d["code"] == "closes-after-n"]
    assert "after about 290 requests (30 closes, without announcing it" in said["message"]
    assert {"closes-after-n", "unannounced-close"} <= _codes(outcome)


@pytest.mark.parametrize(
    ("closes", "connections", "other"),
    [
        (3, 13, None),  # fewer closes than connections: stray closes, no limit to speak of
        (0, 10, None),  # none
        (9_000, 9_010, "no-keep-alive"),  # nearly every reply: no keep-alive, said as such
    ],
    ids=["stray", "none", "every-reply"],
)
def test_no_limit_is_claimed_without_regular_closes(tmp_path, closes, connections, other):
    run = result(ok=10_000, mean_us=1000, close_replies=closes, connections=connections)
    outcome, _ = _measure(tmp_path, [run])
    assert "closes-after-n" not in _codes(outcome)
    assert other is None or other in _codes(outcome)


def test_a_server_without_the_loads_protocol_is_unavailable_before_any_load(tmp_path):
    no_h2c = replace(GOOD, h2c=False, protocol_detail="no SETTINGS: it replied 'HTTP/1.1 400'")
    outcome, engine = _measure(tmp_path, [result()], caps=no_h2c, protocol="h2c", streams=10)
    assert outcome.status == "unavailable" and engine.plans == []
    assert outcome.reason == (
        "does not speak HTTP/2 with prior knowledge (h2c) here: no SETTINGS: it replied "
        "'HTTP/1.1 400' (behaviour check)"
    )
    assert outcome.capabilities is not None and outcome.capabilities["h2c"] is False
    # Found: measured as usual.
    outcome, engine = _measure(
        tmp_path, [result()] * 3, caps=replace(GOOD, h2c=True), protocol="h2c"
    )
    assert outcome.status == "measured" and len(engine.plans) == 4
