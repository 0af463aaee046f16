"""The capacity search on made-up servers: a known knee is found within the resolution, noise of
a stated size keeps it inside the interval, an engine-limited step stops the search as invalid,
and the result read back from the steps is the search's."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from wsgibench.machine.cpustat import Interference
from wsgibench.results.capacity import (
    Budget,
    Search,
    Step,
    StepStatus,
    capacity_of,
    cost_rates,
    set_aside,
)
from wsgibench.results.capacity_step import judge_step

BUDGET = Budget(p99_ms=10.0)


@dataclass(frozen=True)
class Rep:
    latency_p99_us: float | None
    latency_p50_us: float | None = 500.0
    error_rate: float | None = 0.0
    rps_ok: float | None = None
    requests: int = 1000


def knee_server(knee: float, noise: float = 0.0, seed: int = 1):
    """p99 2 ms below the knee, 200 ms past it; `noise`: each repeat's rate seen off by up to
    that share (a noisy machine moves the knee by as much)."""
    rng = random.Random(seed)

    def repeats(rate: float, n: int = 3) -> list[Rep]:
        out = []
        for _ in range(n):
            seen = rate * (1 + rng.uniform(-noise, noise))
            out.append(Rep(2000.0 if seen < knee else 200_000.0))
        return out

    return repeats


def run(search: Search, server, invalid_at: float | None = None):
    while (rate := search.next_rate()) is not None:
        bad = "engine saturated" if invalid_at is not None and rate >= invalid_at else None
        search.record(judge_step(rate, server(rate), BUDGET, invalid=bad))
    return search.result()


@pytest.mark.parametrize("knee", [137.0, 1234.0, 4321.0, 77_777.0])
def test_a_known_knee_is_found_within_the_resolution(knee: float):
    result = run(Search(start=100, resolution=0.05), knee_server(knee))
    assert result.capacity is not None and result.above is not None
    assert result.capacity < knee <= result.above
    assert (result.above - result.capacity) / result.capacity <= 0.05
    assert result.stopped == "within 5%" and result.invalid is None
    assert len(result.steps) <= 16


def test_noise_of_a_stated_size_does_not_move_it_beyond_the_interval():
    knee = 5000.0
    for seed in range(20):
        result = run(Search(start=100, resolution=0.05), knee_server(knee, noise=0.03, seed=seed))
        assert result.capacity is not None and result.above is not None
        # every repeat of a met step was below the knee: the capacity cannot be above it
        assert result.capacity < knee * 1.0 / (1 - 0.03) + 1
        assert result.above >= knee * (1 - 0.03)


def test_a_step_that_saturates_the_engine_stops_the_search_as_invalid():
    result = run(Search(start=100), knee_server(10_000.0), invalid_at=1600.0)
    assert result.invalid == "engine saturated"
    assert result.stopped == "invalid at 1600/s: engine saturated"
    assert result.capacity == 800.0 and result.above is None  # never the server's limit
    assert [s.status for s in result.steps][-1] == StepStatus.INVALID


def test_a_server_that_misses_at_the_start_is_searched_downwards():
    result = run(Search(start=1000, min_rate=1), knee_server(90.0))
    assert result.capacity is not None and result.capacity < 90 <= (result.above or 0)


def test_the_ceiling_of_the_search_is_tried_and_said():
    result = run(Search(start=100, max_rate=1000), knee_server(1e9))
    assert [s.rate for s in result.steps] == [100, 200, 400, 800, 1000]
    assert result.capacity == 1000.0 and result.above is None
    assert result.stopped.startswith("the search's ceiling")


def test_the_floor_of_the_search_is_tried():
    result = run(Search(start=100, min_rate=30), knee_server(10.0))
    assert [s.rate for s in result.steps] == [100, 50, 30]
    assert result.capacity is None and result.stopped == "missed at the lowest rate tried"


@pytest.mark.parametrize("knee", [1234.5, 99_999.0])
def test_a_fine_resolution_is_reached_past_three_digits(knee: float):
    result = run(Search(start=100, resolution=0.001, max_steps=40), knee_server(knee))
    assert result.capacity is not None and result.above is not None
    assert result.capacity < knee <= result.above
    assert (result.above - result.capacity) / result.capacity <= 0.001, result
    assert result.stopped == "within 0%" or result.stopped.startswith("within")


def test_judging_a_step():
    ok = [Rep(4000.0), Rep(9000.0)]
    assert judge_step(100, ok, BUDGET).status == StepStatus.MET
    one_over = [Rep(4000.0), Rep(11_000.0)]
    step = judge_step(100, one_over, BUDGET)
    assert step.status == StepStatus.MISSED and step.reason == "repeat 2: p99 11 ms > 10 ms"
    errors = judge_step(100, [Rep(1000.0, error_rate=0.2)], BUDGET)
    assert errors.status == StepStatus.MISSED and errors.errors and "errors" in errors.reason
    p50 = judge_step(100, [Rep(1000.0, latency_p50_us=3000.0)], Budget(10.0, p50_ms=2.0))
    assert p50.status == StepStatus.MISSED and "p50" in p50.reason
    gave_up = judge_step(100, [], BUDGET, gave_up="disqualified: server crashed")
    assert gave_up.status == StepStatus.MISSED and gave_up.errors


def test_errors_start_where_the_first_step_had_any():
    steps = [
        judge_step(100, [Rep(1000.0)], BUDGET),
        judge_step(200, [Rep(1000.0, error_rate=0.001)], BUDGET),
        judge_step(400, [Rep(50_000.0, error_rate=0.3)], BUDGET),
    ]
    result = capacity_of(steps, 0.05)
    assert result.capacity == 200 and result.above == 400 and result.error_onset == 200


def test_a_met_step_above_a_miss_is_not_trusted():
    steps = [
        judge_step(100, [Rep(1000.0)], BUDGET),
        judge_step(200, [Rep(50_000.0)], BUDGET),
        judge_step(300, [Rep(1000.0)], BUDGET),  # a lucky step past the knee
    ]
    assert capacity_of(steps, 0.05).capacity == 100


def test_cpu_cost_rates_are_the_shares_not_tried_yet():
    assert cost_rates(1000.0, [1000.0, 500.0]) == [250.0, 750.0]


@dataclass(frozen=True)
class StolenRep(Rep):
    """A repeat with what the server's CPUs were busy with and the hypervisor took."""

    server_cpu: Interference | None = None


def _stolen(p99_us: float, steal_pct: float | None, busy_pct: float = 90.0) -> StolenRep:
    use = None if steal_pct is None else Interference((0,), busy_pct, busy_pct, 0.0, steal_pct)
    return StolenRep(p99_us, server_cpu=use)


def test_a_miss_while_the_hypervisor_took_the_servers_cpu_is_not_the_servers():
    # Over the budget in repeat 2, the server's CPU busy 85 % and 8 % stolen on top (full): the
    # machine's miss. The step is invalid, said as the harness's (the capacity below it is a
    # lower bound).
    step = judge_step(500, [_stolen(2000, 9.0), _stolen(20_000, 8.0, busy_pct=85.0)], BUDGET)
    assert (step.status, step.harness) == (StepStatus.INVALID, True)
    assert step.reason == (
        "repeat 2: p99 20 ms > 10 ms while the hypervisor took 8 % of the server's CPUs (steal): "
        "the machine's miss, not the server's"
    )
    result = capacity_of([judge_step(250, [_stolen(2000, 0.0)], BUDGET), step], 0.05)
    assert result.capacity == 250 and result.lower_bound and result.above is None
    # A repeat that met the budget with its CPUs stolen met it. A miss is the server's with 5 %
    # stolen or less, with none recorded, or when its CPUs had room left all the same (a sleeping
    # app: 10 % busy and 20 % stolen).
    assert judge_step(500, [_stolen(2000, 30.0)], BUDGET).status == StepStatus.MET
    for steal, busy in ((5.0, 95.0), (None, 95.0), (20.0, 10.0)):
        missed = judge_step(500, [_stolen(20_000, steal, busy)], BUDGET)
        assert (missed.status, missed.harness) == (StepStatus.MISSED, False), (steal, busy)


def test_a_server_that_served_clearly_less_past_its_capacity_tipped():
    def step(rate: float, p99_us: float, served: float):
        return judge_step(rate, [Rep(p99_us, rps_ok=served)], BUDGET, offered_rps=rate)

    met = [step(1000, 2000.0, 1000.0), step(2000, 3000.0, 2000.0)]
    # offered 2,100 and 4,000 it served 1,700 and 1,500: 15 % and 25 % below the 2,000 it met
    tipped = [*met, step(4000, 900_000.0, 1500.0), step(2100, 400_000.0, 1700.0)]
    result = capacity_of(tipped, 0.05)
    assert result.capacity == 2000
    tip = result.tipped()
    assert tip is not None and (tip.rate, tip.served) == (2100, 1700.0)
    # a saturated server a few per cent below its capacity did not tip
    held = capacity_of([*met, step(2100, 50_000.0, 1900.0)], 0.05)
    assert held.capacity == 2000 and held.tipped() is None
    # rates in connections/s of `calls` requests each: served is in requests/s
    calls = capacity_of([step(20, 2000.0, 2000.0), step(21, 50_000.0, 1500.0)], 0.05)
    assert calls.tipped(calls=100) is not None and calls.tipped(calls=1) is None


def test_a_search_seeded_with_an_earlier_interval_brackets_the_knee_in_two_steps():
    # an earlier, coarser search found 1,200–1,440: this one tries both ends itself, then bisects
    seeded = run(Search(start=1200, second=1440, resolution=0.05), knee_server(1234.0))
    assert [s.rate for s in seeded.steps][:2] == [1200, 1440]
    assert seeded.capacity is not None and seeded.capacity < 1234 <= (seeded.above or 0)
    assert seeded.stopped == "within 5%"
    plain = run(Search(start=100, resolution=0.05), knee_server(1234.0))
    assert len(seeded.steps) < len(plain.steps) - 3, (seeded.steps, plain.steps)
    # the earlier interval was wrong: too low (doubling goes on from its top) or too high
    # (halving from its bottom), and the knee is found all the same
    for start, second, knee in ((300, 360, 1234.0), (3000, 3600, 1234.0)):
        result = run(Search(start=start, second=second), knee_server(knee))
        assert result.capacity is not None and result.capacity < knee <= (result.above or 0)
        assert result.stopped == "within 5%"
    # a first rate that misses now: the next is as far below it as the top was above
    lower = run(Search(start=1300, second=1400), knee_server(1234.0))
    assert [s.rate for s in lower.steps][:2] == [1300, 1210]
    assert lower.capacity == 1210 and lower.stopped == "within 5%"
    # a second rate at or below the first is no bracket: doubling, as without one
    assert [s.rate for s in run(Search(start=100, second=80), knee_server(300.0)).steps][:2] == [
        100,
        200,
    ]


def _busy_machine(rates_busy: list[float]):
    """A knee at 10,000/s; each rate in `rates_busy` (a rate listed twice: twice) is limited by
    the machine the next time it is tried (Step.machine)."""
    busy = list(rates_busy)
    server = knee_server(10_000.0)

    def step(rate: float) -> Step:
        if rate in busy:
            busy.remove(rate)
            return Step(rate, StepStatus.INVALID, "engine starved", harness=True, machine=True)
        return judge_step(rate, server(rate), BUDGET)

    return step


def _searched(search: Search, step) -> Search:
    while (rate := search.next_rate()) is not None:
        search.record(step(rate))
    return search


def test_a_step_the_machine_limited_is_run_again_once_and_set_aside():
    search = _searched(Search(start=100), _busy_machine([1600]))
    rates = [s.rate for s in search.steps]
    assert rates[:6] == [100, 200, 400, 800, 1600, 1600]
    result = search.result()
    assert result.rerun == (4,) and set_aside(search.steps) == (4,)
    assert result.capacity is not None and result.capacity < 10_000 <= (result.above or 0)
    assert result.stopped == "within 5%" and result.invalid is None and not result.lower_bound
    # read back from the steps alone (a report on the store), the same
    assert capacity_of(search.steps, 0.05) == result


def test_limited_again_at_once_the_search_stops_as_a_lower_bound():
    result = _searched(Search(start=100), _busy_machine([1600, 1600])).result()
    assert [s.rate for s in result.steps] == [100, 200, 400, 800, 1600, 1600]
    assert result.rerun == (4,) and result.stopping is result.steps[5]
    assert (result.capacity, result.above, result.lower_bound) == (800, None, True)
    assert result.stopped == "invalid at 1600/s: engine starved"


def test_reruns_are_bounded_per_search():
    # Three steps the machine limited, each once: the first two run again, the third ends it.
    result = _searched(Search(start=100, reruns=2), _busy_machine([400, 1600, 3200])).result()
    assert [s.rate for s in result.steps] == [100, 200, 400, 400, 800, 1600, 1600, 3200]
    assert result.rerun == (2, 5) and result.lower_bound
    assert (result.capacity, result.stopped) == (1600, "invalid at 3200/s: engine starved")
