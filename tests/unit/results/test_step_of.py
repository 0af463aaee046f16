"""A stored or measured cell read as a capacity step (results/capacity_step.py `step_of`), one
status at a time: what each status makes of the step (its verdict, its reason, whether the harness
or the machine limited it, whether it had errors), and the requests offered a second it is judged
against (the rate times the calls a connection, or times a replay's own rate)."""

from __future__ import annotations

from dataclasses import replace

from wsgibench.results.capacity import Budget, StepStatus
from wsgibench.results.capacity_step import BOTTLENECK, step_of
from wsgibench.results.verdict import CellStatus

from .test_capacity_step import FAST, SLEEPY, SLOW_BUDGET, TIPPED, rep

BUDGET = Budget(p99_ms=10.0)
LAGGED = f"{BOTTLENECK}schedule lag p99 5000 us > 1000 us"
STARVED = f"{BOTTLENECK}engine starved: it waited for its CPU(s) [1] 8 % of the time"
OWN = f"{BOTTLENECK}engine CPU 99% of its 1 thread(s)"


def saturated(r):
    """The repeat as an engine limited by its own account (its CPU, its lag) measured it."""
    return replace(r, engine=replace(r.engine, saturated=True))


def test_a_server_that_did_not_start_ends_the_search_as_invalid_at_its_rate():
    step = step_of(300, CellStatus.DISQUALIFIED, "exited with 1", [], BUDGET)
    assert (step.rate, step.status, step.reason) == (
        300,
        StepStatus.INVALID,
        "did not start or serve: exited with 1",
    )
    assert not step.harness
    # one that served and then gave up missed the step
    gave_up = step_of(300, CellStatus.DISQUALIFIED, "stopped answering", [rep(FAST)], BUDGET)
    assert (gave_up.rate, gave_up.status, gave_up.reason) == (
        300,
        StepStatus.MISSED,
        "disqualified: stopped answering",
    )


def test_an_invalid_cell_is_the_servers_miss_only_beyond_the_engines_lag():
    worse = [rep(FAST, lag_us=2000)] * 2 + [rep(TIPPED, lag_us=2000, error_rate=0.01)] * 3
    missed = step_of(1000, CellStatus.INVALID, LAGGED, worse, BUDGET)
    assert (missed.rate, missed.status, missed.errors) == (1000, StepStatus.MISSED, True)
    assert missed.reason.endswith("the server's miss")
    clean = step_of(1000, CellStatus.INVALID, LAGGED, [rep(TIPPED, lag_us=2000)] * 5, BUDGET)
    assert (clean.status, clean.errors) == (StepStatus.MISSED, False)
    # a starved engine that kept its schedule: met
    kept = step_of(10, CellStatus.INVALID, STARVED, [rep(FAST, lag_us=2000)], BUDGET)
    assert (kept.rate, kept.status, kept.harness) == (10, StepStatus.MET, False)
    # judged with its connections' calls: 2,700 of 3,000 requests answerable in 1 s were served
    chained = [rep(SLEEPY, 2_700, window_s=1.0, lag_us=2000)]
    assert step_of(1000, CellStatus.INVALID, STARVED, chained, SLOW_BUDGET, calls=3).status == (
        StepStatus.MET
    )
    # and against a replay's requests offered: 800 of 900 answerable short, the calls chained
    # off the schedule the starved engine kept, so not the server's: run again
    replayed = step_of(
        2,
        CellStatus.INVALID,
        STARVED,
        [rep(SLEEPY, 800, window_s=1.0, lag_us=2000)],
        SLOW_BUDGET,
        calls=3,
        unit_rps=500.0,
    )
    assert (replayed.rate, replayed.status, replayed.machine) == (2, StepStatus.INVALID, True)
    # the engine's own limit: invalid, the harness's, not a passing condition of the machine
    own = step_of(10, CellStatus.INVALID, OWN, [saturated(rep(FAST))], BUDGET)
    assert (own.rate, own.status, own.reason, own.harness, own.machine) == (
        10,
        StepStatus.INVALID,
        OWN,
        True,
        False,
    )
    # starved and short beyond nothing the rules can bound (its engine saturated too): the
    # machine's, run again
    late = saturated(rep(FAST, served=500, lag_us=2000))
    machine = step_of(1000, CellStatus.INVALID, STARVED, [late], BUDGET)
    assert (machine.status, machine.harness, machine.machine) == (StepStatus.INVALID, True, True)
    assert step_of(10, CellStatus.INVALID, None, [rep(FAST)], BUDGET).reason == "invalid"


def test_the_machine_or_the_server_unable_to_run_it_make_it_invalid():
    contended = step_of(10, CellStatus.CONTENDED, "steal 17 %", [rep(FAST)], BUDGET)
    assert (contended.rate, contended.status, contended.reason, contended.harness) == (
        10,
        StepStatus.INVALID,
        "contended: steal 17 %",
        True,
    )
    assert contended.machine
    for status in (CellStatus.UNAVAILABLE, CellStatus.FAILED):
        step = step_of(10, status, "no such app", [], BUDGET)
        assert (step.rate, step.status, step.reason, step.harness) == (
            10,
            StepStatus.INVALID,
            f"{status}: no such app",
            False,
        )


def test_a_measured_cell_is_judged_against_the_requests_offered():
    # one request a connection unless told: 890 of the 950 answerable in 1 s is falling behind
    short = step_of(1000, CellStatus.MEASURED, None, [rep(SLEEPY, 890, window_s=1.0)], SLOW_BUDGET)
    assert short.status == StepStatus.MISSED
    assert short.reason.startswith("890 valid replies/s of 1,000 offered (950 answerable")
    # 3 calls a connection: 1,000 connections/s offer 3,000 requests/s
    calls = step_of(
        1000, CellStatus.MEASURED, None, [rep(SLEEPY, 2_500, window_s=1.0)], SLOW_BUDGET, calls=3
    )
    assert calls.reason.startswith("2,500 valid replies/s of 3,000 offered (2,700 answerable")
    # a replay at speed 2 of a log of 500 requests/s offers 1,000 requests/s, whatever its calls
    replay = step_of(
        2,
        CellStatus.MEASURED,
        None,
        [rep(SLEEPY, 800, window_s=1.0)],
        SLOW_BUDGET,
        calls=3,
        unit_rps=500.0,
    )
    assert replay.reason.startswith("800 valid replies/s of 1,000 offered (900 answerable")
    # worker deaths: judged as measured, the deaths said with the verdict
    deaths = step_of(10, CellStatus.DEATHS, "2 workers died (oom)", [rep(FAST)], BUDGET)
    assert deaths.status == StepStatus.MET
    assert deaths.reason == "p99 1 ms over 1 repeat; 2 workers died (oom)"
