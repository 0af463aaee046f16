"""Judging returns a Verdict and changes nothing it is given; the cell applies it; diagnosis reads
the Verdict it is handed, never what judging might have written somewhere."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from wsgibench.machine.cpustat import CpuTimes
from wsgibench.machine.sampler import Sampler
from wsgibench.results import latency
from wsgibench.results.capacity_step import machine_limited
from wsgibench.results.diagnose import diagnose, facts_from
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.http2_result import Http2Result
from wsgibench.results.repeat import Counters, Repeat
from wsgibench.results.verdict import CellStatus, Verdict
from wsgibench.results.websocket_result import WebSocketResult
from wsgibench.run.judge import engine_headroom, judge_repeat
from wsgibench.run.outcome import CellOutcome
from wsgibench.run.records import dropped, interference_record, repeat_record, window_record

from .fakes import FakeCgroup, FakeServer, result
from .test_judging import _measure

IDLE = CpuTimes({0: 0.0, 1: 0.0}, {0: 0.0, 1: 0.0})
THRESHOLD = 0.05


def _recorded(engine: EngineResult, idx: int = 0) -> Repeat:
    """A repeat as run/cell.py records it, the CPUs idle but for the server and the engine."""
    use = interference_record(
        IDLE,
        IDLE,
        engine.elapsed_s,
        [0],
        0.0,
        [1],
        engine.cost.cpu_s,
        0.0,
        engine.runqueue_wait_fraction,
        engine.cost.cpu_fraction,
    )
    expected, nothing_dropped = dropped(engine)
    counters = Counters(
        {}, 0, latency.by_kind(engine), window_record(engine), use, expected, nothing_dropped
    )
    return repeat_record(idx, engine, Sampler(lambda: [], 9), counters)


GOOD = result(ok=10_000, mean_us=1000)
CASES = {
    "measured": GOOD,
    "saturated": result(ok=10_000, mean_us=1000, saturated=True, reasons=("engine CPU 99 %",)),
    "starved": replace(GOOD, runqueue_wait_s=0.3),
    "errors": result(ok=900, errors={"timeout": 80, "reset": 20}),
    "hosts-apart": replace(GOOD, start_skew_s=0.012, start_skew_bound_s=0.010),
}


@pytest.mark.parametrize("engine", CASES.values(), ids=CASES.keys())
def test_judging_changes_nothing_it_is_given(engine):
    rep = _recorded(engine)
    before, document, extra = copy.deepcopy(rep), copy.deepcopy(rep.engine.raw), rep.extra()
    verdict = judge_repeat(rep, FakeServer(), THRESHOLD)
    assert rep == before and rep.engine.raw == document and rep.extra() == extra
    assert rep.saturated is engine.saturated and rep.saturation_reasons is None
    # the same repeat judged again says the same: nothing judging saw was changed by it
    assert judge_repeat(rep, FakeServer(), THRESHOLD) == verdict


def test_a_starved_engine_is_said_in_the_verdict_not_written_into_the_repeat():
    rep = _recorded(CASES["starved"])
    verdict = judge_repeat(rep, FakeServer(), THRESHOLD)
    assert verdict.status == CellStatus.INVALID and verdict.saturated
    assert verdict.reason.startswith("load generator was the bottleneck: engine starved")
    assert not rep.saturated  # the engine did not say so; only the verdict does
    stored = rep.judged(verdict)
    assert stored.saturated and stored.extra()["saturation_reasons"] == list(
        verdict.saturation_reasons
    )
    assert not rep.saturated and "saturation_reasons" not in rep.extra()


def test_what_the_machine_limited_is_told_from_the_engines_own_limits():
    # A capacity step the machine limited is run again (results/capacity.py); one the engine's
    # own limit stopped is not: the reasons as judging writes them decide which.
    starved = judge_repeat(_recorded(CASES["starved"]), FakeServer(), THRESHOLD).reason
    assert starved and machine_limited(starved)
    lag = "load generator was the bottleneck: schedule lag p99 11079 us > 10000 us"
    assert machine_limited(lag)
    assert machine_limited(f"{lag}, {starved.partition(': ')[2]}")
    apart = judge_repeat(_recorded(CASES["hosts-apart"]), FakeServer(), THRESHOLD).reason
    assert apart and apart.startswith("load hosts started 12.0 ms apart") and machine_limited(apart)
    for own in (
        "load generator was the bottleneck: engine CPU 99% of its 1 thread(s)",
        "load generator was the bottleneck: engine CPU 99% of its 1 thread(s), "
        + starved.partition(": ")[2],
        "load generator was the bottleneck: engine ran out of ephemeral ports 3 times",
        "load generator was the bottleneck: ",
        "load host lost: worker tcp://10.0.0.2 died",
        None,
    ):
        assert not machine_limited(own), own


def test_a_disqualified_verdict_ends_the_cell_and_keeps_no_saturation_reasons():
    server = FakeServer(dies_after=0, cgroup=FakeCgroup(kills=1))
    verdict = judge_repeat(_recorded(GOOD), server, THRESHOLD)
    assert verdict.ends_cell and verdict.status == CellStatus.DISQUALIFIED
    assert verdict.saturation_reasons is None  # judging stopped before looking
    assert verdict.reason.endswith("(memory limit hit: 1 OOM kill(s))")


def test_the_cell_applies_verdicts_in_order():
    rep = _recorded(GOOD)
    outcome = CellOutcome()
    outcome.apply(rep, Verdict())
    assert (outcome.status, outcome.reason) == (CellStatus.MEASURED, None)
    outcome.apply(rep, Verdict(CellStatus.INVALID, "first", saturation_reasons=()))
    outcome.apply(rep, Verdict(CellStatus.INVALID, "second", saturation_reasons=()))
    assert (outcome.status, outcome.reason) == (CellStatus.INVALID, "first")
    outcome.apply(rep, Verdict(CellStatus.DISQUALIFIED, "crashed"))
    assert (outcome.status, outcome.reason) == (CellStatus.DISQUALIFIED, "crashed")
    assert len(outcome.repeats) == 4


def _diagnosed(pairs: list[tuple[Repeat, Verdict]]) -> list[dict]:
    return [
        d.as_dict()
        for d in diagnose([facts_from(r, v, "closed", 10, True, 100.0) for r, v in pairs])
    ]


def test_diagnosis_reads_the_verdict_it_is_given():
    rep = _recorded(CASES["starved"])
    verdict = judge_repeat(rep, FakeServer(), THRESHOLD)
    said = _diagnosed([(rep, verdict)])
    (saturated,) = [d for d in said if d["code"] == "engine-saturated"]
    assert "engine starved" in saturated["message"]
    # the repeat as recorded or as stored after judging: the same diagnosis, from the verdict
    assert _diagnosed([(rep.judged(verdict), verdict)]) == said
    # the repeat alone does not say the engine was starved: a verdict of measured finds no saturation
    assert "engine-saturated" not in {d["code"] for d in _diagnosed([(rep, Verdict())])}


@pytest.mark.parametrize("engine", CASES.values(), ids=CASES.keys())
def test_a_cells_diagnoses_are_those_of_its_repeats_and_their_verdicts(tmp_path, engine):
    outcome, _ = _measure(tmp_path, [engine])
    verdicts = [judge_repeat(r, FakeServer(), THRESHOLD) for r in outcome.repeats]
    assert outcome.diagnoses == _diagnosed(list(zip(outcome.repeats, verdicts, strict=True)))


def _busy(fraction: float, saturated: bool = False, idx: int = 0) -> Repeat:
    engine = result(ok=90_000, saturated=saturated, reasons=("engine CPU 99 %",) * saturated)
    cost = replace(engine.cost, cpu_fraction=fraction, user_s=0.1, sys_s=0.8, io_backend="io_uring")
    return _recorded(replace(engine, cost=cost), idx)


def test_a_measured_cell_says_when_the_engine_came_close_to_its_limit() -> None:
    note = engine_headroom([_busy(0.40), _busy(0.91, idx=1)])
    assert note is not None
    assert "91% of its CPU(s) on io_uring in repeat 2" in note
    assert "100,000 responses per engine CPU-second" in note


def test_no_headroom_note_when_the_engine_had_room_or_was_already_judged_saturated() -> None:
    assert engine_headroom([_busy(0.84), _busy(0.20)]) is None
    # A saturated repeat is invalid already: its own reason says more than this note would.
    assert engine_headroom([_busy(0.99, saturated=True)]) is None


def _websocket(ok: int, ws: dict) -> Repeat:
    engine = result(ok=ok, errors={"handshake_failed": 40})
    parsed = WebSocketResult.from_dict({"handshakes_ok": 0} | ws)
    return _recorded(replace(engine, websocket=parsed))


def test_a_server_that_refuses_every_upgrade_is_unavailable_with_its_answers() -> None:
    refused = _websocket(
        0, {"handshake_failures": {"status": 30, "accept": 10}, "handshake_statuses": {"403": 30}}
    )
    verdict = judge_repeat(refused, FakeServer(), THRESHOLD)
    assert verdict.status == CellStatus.UNAVAILABLE and verdict.ends_cell
    assert verdict.reason == (
        "does not speak WebSocket here: all 40 upgrades failed in repeat 1 (accept x10; HTTP 403 x30)"
    )
    outcome = CellOutcome()
    outcome.apply(refused, verdict)
    assert (outcome.status, outcome.reason) == (CellStatus.UNAVAILABLE, verdict.reason)


def test_one_upgrade_that_succeeded_makes_upgrade_failures_errors_not_unavailability() -> None:
    some = _websocket(0, {"handshakes_ok": 1, "handshake_failures": {"status": 40}})
    assert judge_repeat(some, FakeServer(), THRESHOLD).status == CellStatus.DISQUALIFIED
    # An HTTP load has no websocket section: nothing changes.
    assert judge_repeat(_recorded(GOOD), FakeServer(), THRESHOLD).status == CellStatus.MEASURED


def _http2(ok: int, h2: dict) -> Repeat:
    engine = result(ok=ok, errors={"protocol_error": 20})
    return _recorded(replace(engine, http2=Http2Result.read({"connections": 20} | h2)))


def test_a_server_that_never_speaks_h2c_is_unavailable_with_what_it_sent() -> None:
    refused = _http2(0, {"protocol_errors": {"frame_size": 20}})
    verdict = judge_repeat(refused, FakeServer(), THRESHOLD)
    assert verdict.status == CellStatus.UNAVAILABLE and verdict.ends_cell
    assert verdict.reason == (
        "does not speak HTTP/2 with prior knowledge (h2c) here: no SETTINGS on 20 connections; "
        "frame_size x20 in repeat 1"
    )


def test_a_server_that_sent_settings_is_judged_on_its_answers() -> None:
    # It spoke HTTP/2 and then answered nothing: disqualified, not unavailable.
    spoke = _http2(0, {"settings_received": 20})
    assert judge_repeat(spoke, FakeServer(), THRESHOLD).status == CellStatus.DISQUALIFIED
    assert Http2Result.read(None) is None
    assert Http2Result.read({"connections": 3, "settings_received": 3}).refusal() is None


def test_replies_that_are_all_wrong_are_not_a_silence(tmp_path):
    # Every reply came and none was valid (an app missing what its start-up never set up): said
    # as such, with the error class, not as a server that stopped answering.
    wrong = result(ok=0, errors={"bad_body": 5000}, totals={"responses": 5000})
    outcome, _ = _measure(tmp_path, [wrong])
    said = "no valid reply in repeat 1: 5,000 replies, every one an error (bad_body 5000)"
    assert (outcome.status, outcome.reason) == ("disqualified", said)
