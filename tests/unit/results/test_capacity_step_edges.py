"""The edges of a capacity step's verdict that a mutation run (bench/mutation, docs/mutation.md)
found untested: a repeat without a histogram or an engine result (a stored one from before them),
connections of several requests and the window they are judged in, a p50 budget widened by the
engine's lag, the boundaries of 'tipped' and of a full CPU stolen from, and the words a reason
quotes (a latency read off in milliseconds)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from hdrh.histogram import HdrHistogram

from wsgibench.machine.cpustat import Interference
from wsgibench.results.capacity import (
    Budget,
    Step,
    StepStatus,
    bounds,
    capacity_of,
    cost_rates,
    set_aside,
)
from wsgibench.results.capacity_pool import pool
from wsgibench.results.capacity_step import (
    BOTTLENECK,
    judge_step,
    missed_beyond_lag,
    starved_on_schedule,
    verdict_known,
)
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.hdr_docs import histogram_doc

from ..run.fakes import recorded, result
from .test_capacity import Rep as Bare  # a stored repeat from before histograms: its own p99
from .test_capacity_step import FAST, OFFERED, SLEEPY, SLOW_BUDGET, Rep, rep

BUDGET = Budget(p99_ms=10.0)
LAGGED = f"{BOTTLENECK}schedule lag p99 5000 us > 1000 us"
STARVED = f"{BOTTLENECK}engine starved: it waited for its CPU(s) [1] 8 % of the time"


@dataclass(frozen=True)
class Stolen(Rep):
    """A measured repeat with what the server's CPUs were busy with and the hypervisor took."""

    server_cpu: Interference | None = None


def stolen(r: Rep, steal_pct: float, busy_pct: float) -> Stolen:
    use = Interference((0,), busy_pct, busy_pct, 0.0, steal_pct)
    return Stolen(r.engine, r.rps_ok, r.error_rate, use)


def test_a_repeat_without_a_histogram_is_judged_on_its_own_percentile():
    # 50 ms over a 10 ms budget in the one repeat of three: a miss whatever the two left give
    assert verdict_known([Bare(50_000.0)], BUDGET, None, planned=3) == (
        "repeat 1: p99 50 ms > 10 ms: a miss whatever the 2 repeats left give"
    )
    assert verdict_known([], BUDGET, OFFERED, planned=3) == ""  # nothing measured, nothing known
    # without an engine result nothing says the engine's lag: no step of the server's, and none
    # the starved engine kept its schedule in
    assert missed_beyond_lag(LAGGED, [Bare(50_000.0)], BUDGET) == ""
    assert starved_on_schedule(10, STARVED, [Bare(2_000.0)], BUDGET, calls=1) is None
    assert missed_beyond_lag(None, [rep(FAST, lag_us=2000)], BUDGET) == ""


def test_a_connections_several_requests_are_counted_as_such_before_the_last_repeat():
    # 3 calls a connection, 50 ms replies in a 1 s window: 2,700 of 3,000 answerable
    behind = [rep(SLEEPY, 2_500, window_s=1.0)]
    assert verdict_known(behind, SLOW_BUDGET, 3 * OFFERED, planned=1, calls=3) == (
        "2,500 valid replies/s of 3,000 offered (2,700 answerable in the window): falling behind:"
        " a miss whatever the 0 repeats left give"
    )
    # one request a connection unless told: 950 answerable, 890 is short of its 95 %
    one = verdict_known([rep(SLEEPY, 890, window_s=1.0)], SLOW_BUDGET, OFFERED, planned=1)
    assert one.startswith("890 valid replies/s of 1,000 offered (950 answerable in the window)")


def test_a_miss_the_stolen_repeat_made_is_told_by_the_other_repeats_keeping_up():
    # 3 calls a connection (2,700 answerable of 3,000, so 2,565 keep up): the repeat the
    # hypervisor took 20 % from served 1,500, the other 2,600; the miss is the machine's
    short = stolen(rep(SLEEPY, 1_500, window_s=1.0), steal_pct=20.0, busy_pct=80.0)
    kept = rep(SLEEPY, 2_600, window_s=1.0)
    step = judge_step(100, [short, kept], SLOW_BUDGET, offered_rps=3 * OFFERED, calls=3)
    assert (step.status, step.harness, step.machine) == (StepStatus.INVALID, True, True)
    assert step.reason == (
        "repeat 1: 1,500 valid replies/s of 3,000 offered (2,700 answerable in the window): "
        "falling behind while the hypervisor took 20 % of the server's CPUs (steal): the "
        "machine's miss, not the server's"
    )
    # the other repeat falling behind as well: the server's miss
    behind = rep(SLEEPY, 2_000, window_s=1.0)
    step = judge_step(100, [short, behind], SLOW_BUDGET, offered_rps=3 * OFFERED, calls=3)
    assert (step.status, step.harness) == (StepStatus.MISSED, False), step.reason
    # busy and stolen together exactly 90 %: the CPUs were full
    full = stolen(rep({1_000: 900, 50_000: 100}), steal_pct=10.0, busy_pct=80.0)
    assert judge_step(100, [full, rep(FAST)], BUDGET).status == StepStatus.INVALID


def test_the_engines_lag_widens_a_p50_budget_by_twice_itself():
    budget = Budget(p99_ms=10.0, p50_ms=2.0)
    # p50 5 ms with a 2 ms lag: within 2 + 2 × 2 ms, no miss to give the server
    assert missed_beyond_lag(LAGGED, [rep({5_000: 1000}, lag_us=2000)], budget) == ""
    # p50 7 ms: beyond 6 ms, the server's
    said = missed_beyond_lag(LAGGED, [rep({7_000: 1000}, lag_us=2000)], budget)
    assert said.startswith("p50 7 ms > 6 ms"), said
    # the starved engine that kept its schedule: the same widening decides
    assert starved_on_schedule(1000, STARVED, [rep({5_000: 1000}, lag_us=2000)], budget, 1) is None
    missed = starved_on_schedule(1000, STARVED, [rep({7_000: 1000}, lag_us=2000)], budget, 1)
    assert missed is not None and missed.status == StepStatus.MISSED
    # errors are not the lag's to explain: a lag-limited step's errors never make it the server's
    erring = [rep(FAST, error_rate=0.5, lag_us=2000)]
    assert missed_beyond_lag(LAGGED, erring, BUDGET) == ""


def test_a_starved_engine_is_judged_in_its_own_window_with_its_connections_calls():
    # 3 calls a connection, 2,700 of 3,000 answerable in 1 s: 2,700 served is met
    kept = [rep(SLEEPY, 2_700, window_s=1.0, lag_us=2000)]
    met = starved_on_schedule(1000, STARVED, kept, SLOW_BUDGET, calls=3)
    assert met is not None and met.status == StepStatus.MET, met
    # the lag's share of the window is taken off the keep-up margin: 10 ms of a 0.1 s repeat
    # leaves 85 %, so 90 % served is no miss of the server's; in a 1 s repeat (0.94) it is
    short = rep(FAST, served=900, lag_us=10_000)
    tenth = replace(short, engine=replace(short.engine, elapsed_s=0.1))
    assert starved_on_schedule(1000, STARVED, [tenth], BUDGET, calls=1) is None
    second = starved_on_schedule(1000, STARVED, [short], BUDGET, calls=1)
    assert second is not None and second.status == StepStatus.MISSED
    assert second.reason.endswith("(worst lag 10 ms) explains"), second.reason
    # judged in its window: 800 of 950 answerable is behind, beyond the 2 ms lag's share
    behind = [rep(SLEEPY, 800, window_s=1.0, lag_us=2000)]
    missed = starved_on_schedule(1000, STARVED, behind, SLOW_BUDGET, calls=1)
    assert missed is not None and missed.status == StepStatus.MISSED
    # no window recorded: taken as 1 s (0.94), not 2 (0.945): 94.2 % served is no miss
    unknown = rep(FAST, served=942, lag_us=10_000)
    unknown = replace(unknown, engine=replace(unknown.engine, elapsed_s=0.0))
    assert starved_on_schedule(1000, STARVED, [unknown], BUDGET, calls=1) is None
    # the worst lag quoted in ms
    fine = starved_on_schedule(10, STARVED, [rep(FAST, lag_us=10_000)], BUDGET, calls=1)
    assert fine is not None and fine.reason.endswith("(worst lag 10 ms), which only adds latency")


def test_a_latency_over_the_budget_is_quoted_in_milliseconds():
    step = judge_step(100, [rep({1_000: 970, 100_000: 30})], BUDGET)
    assert step.reason.startswith("p99 100 ms > 10 ms"), step.reason


def test_tipped_and_cost_rates_at_their_boundaries():
    def step(rate: float, p99_us: float, served: float):
        return judge_step(rate, [Bare(p99_us, rps_ok=served)], BUDGET, offered_rps=rate)

    met = [step(1000, 2000.0, 1000.0), step(2000, 3000.0, 2000.0)]
    # served exactly 10 % below the capacity: not clearly less, not tipped
    assert capacity_of([*met, step(2100, 50_000.0, 1800.0)], 0.05).tipped() is None
    assert capacity_of([*met, step(2100, 50_000.0, 1799.0)], 0.05).tipped() is not None
    # a capacity of 2/s has its shares below 1/s; one of 0 has none
    assert cost_rates(2.0, [2.0]) == [0.5, 1.0, 1.5]
    assert cost_rates(0.0, []) == []


@dataclass(frozen=True)
class NoHistogram:
    """A stored repeat with its engine result (its lag) but no latency histogram to add."""

    engine: EngineResult
    latency_p99_us: float
    latency_p50_us: float = 500.0
    error_rate: float = 0.0
    rps_ok: float | None = None
    requests: int = 1000


def kinds_rep(kinds: dict[str, dict[int, int]]) -> Rep:
    """A repeat of several request kinds, each with the latencies (µs: how many) it took."""
    docs = []
    for name, latencies in kinds.items():
        h = HdrHistogram(1, 3_600_000_000, 3)
        for value, count in latencies.items():
            h.record_value(value, count)
        docs.append(recorded(name, h.get_total_count(), 1000) | {"latency_us": histogram_doc(h)})
    engine = result(kinds=docs)
    return Rep(engine, float(sum(k["ok"] for k in docs)))


def test_a_repeat_with_its_engine_but_no_histogram_is_judged_on_its_own_percentile():
    lagged = [NoHistogram(replace(result(lag_max_us=2000), kinds=()), 50_000.0)]
    assert pool(lagged, None).histogram is None  # what the rule falls back from
    said = missed_beyond_lag(LAGGED, lagged, BUDGET)
    assert said.startswith("repeat 1: p99 50 ms > 14 ms"), said
    starved = starved_on_schedule(1000, STARVED, lagged, BUDGET, calls=1)
    assert starved is not None and starved.status == StepStatus.MISSED
    assert starved.rate == 1000 and starved.reason.endswith(
        "beyond what the engine waited for its CPU but kept its schedule (worst lag 2 ms) explains"
    )
    # its own p99 exactly at the budget is within it; 5 µs over is not
    assert judge_step(100, [Bare(10_000.0)], BUDGET).status == StepStatus.MET
    over = judge_step(100, [Bare(10_005.0)], BUDGET)
    assert (over.status, over.reason) == (StepStatus.MISSED, "repeat 1: p99 10 ms > 10 ms")
    assert judge_step(100, [Bare(100_000.0)], BUDGET).reason == "repeat 1: p99 100 ms > 10 ms"
    # met: the slowest repeat's own p99, and how many repeats
    assert judge_step(100, [Bare(3_000.0), Bare(100_000.0)], SLOW_BUDGET).reason == (
        "p99 ≤ 100 ms in 2 repeats"
    )


def test_what_a_step_says_of_itself():
    # no repeat at all, or the server gave up (disqualified) whatever its repeats said
    assert judge_step(100, [], BUDGET) == Step(100, StepStatus.MISSED, "no repeat measured", True)
    gave_up = judge_step(100, [rep(FAST)], BUDGET, gave_up="disqualified: it died")
    assert (gave_up.status, gave_up.reason) == (StepStatus.MISSED, "disqualified: it died")
    # an invalid step keeps whether any of its repeats had errors (where errors start)
    invalid = judge_step(100, [rep(FAST, error_rate=0.01)], BUDGET, invalid="engine saturated")
    assert invalid.errors is True and invalid.status == StepStatus.INVALID
    # errors exactly at the budget's 5 % are within it
    assert judge_step(100, [rep(FAST, error_rate=0.05)], BUDGET).status == StepStatus.MET
    # a p99 just past the limit shows the digits that tell it from the limit; one repeat said
    near = judge_step(100, [rep({1_000: 980, 10_100: 20})], BUDGET)
    assert near.reason.startswith("p99 10.1 ms > 10 ms (2.0% of the requests"), near.reason
    # 4 µs past it (in the histogram's bucket after 10,000 µs): over the 10 ms, not over 10.01 ms
    just = judge_step(100, [rep({1_000: 980, 10_004: 20})], BUDGET)
    assert just.status == StepStatus.MISSED
    assert re.match(r"p99 10\.0\d ms > 10 ms \(2\.0% of the requests", just.reason), just.reason
    slow = judge_step(100, [rep({100_000: 1000})], SLOW_BUDGET)
    assert slow.reason == "p99 100 ms over 1 repeat", slow.reason
    # a repeat the hypervisor's steal made miss keeps its errors too
    stolen_miss = stolen(rep({1_000: 900, 50_000: 100}, error_rate=0.01), 20.0, 80.0)
    step = judge_step(100, [stolen_miss, rep(FAST)], BUDGET)
    assert step.status == StepStatus.INVALID and step.errors is True


def test_each_kind_is_judged_on_the_share_of_the_planned_repeats_measured():
    budget = Budget(p99_ms=10.0, p50_ms=20.0, per_kind=True)
    # "slow": 20 of 1,000 requests over 10 ms, 2 % of its own (0.2 % of all): within the step's
    # p99, past the kind's; before the last of three repeats it is 0.67 %: not known yet
    mixed = kinds_rep({"fast": {1_000: 9_000}, "slow": {1_000: 980, 50_000: 20}})
    assert verdict_known([mixed], budget, None, planned=3) == ""
    known = verdict_known([mixed, mixed, mixed], budget, None, planned=3)
    assert known.startswith("slow: p99 50 ms > 10 ms (2.0% of its 3,000 requests"), known
    # half of a kind's requests over the p50 budget is its p50 within it; more is not
    half = kinds_rep({"fast": {1_000: 9_000}, "slow": {1_000: 500, 19_000: 480, 21_000: 20}})
    assert judge_step(100, [half], replace(budget, p99_ms=50.0)).status == StepStatus.MET
    more = kinds_rep({"fast": {1_000: 9_000}, "slow": {1_000: 490, 21_000: 510}})
    assert judge_step(100, [more], replace(budget, p99_ms=50.0)).reason.startswith("slow: p50")


def test_a_budget_and_a_result_say_what_they_are():
    assert Budget(p99_ms=10.0, p50_ms=2.0).describe() == ("p99 ≤ 10 ms, p50 ≤ 2 ms, errors ≤ 5.0%")
    met = [Step(100, StepStatus.MET, "", cell_id=1), Step(200, StepStatus.MET, "", cell_id=2)]
    wide = capacity_of([*met, Step(400, StepStatus.MISSED, "", cell_id=3)], 0.05)
    assert (wide.stopped, wide.proof) == ("step limit (16) reached", 2)
    # a met and a missed step at one rate (a store read back): the miss stands
    assert bounds([Step(100, StepStatus.MET, ""), Step(100, StepStatus.MISSED, "")]) == (
        None,
        100,
    )
    # only a step the machine limited, followed at once by its own rate, is set aside
    twice = [Step(100, StepStatus.MET, ""), Step(100, StepStatus.MET, "")]
    assert set_aside(twice) == ()
    own = [Step(100, StepStatus.INVALID, "engine CPU", harness=True), Step(50, StepStatus.MET, "")]
    assert set_aside(own) == ()
