"""A capacity step judged on its repeats together (results/capacity_step.py), with real
HdrHistograms: the p99 is that of all their requests, a repeat that tipped for a moment does not
fail a step its repeats kept to the budget together, and a step's verdict is known as soon as no
flawless repeats left could make it meet."""

from __future__ import annotations

from dataclasses import dataclass, replace

from hdrh.histogram import HdrHistogram

from wsgibench.results.capacity import Budget, StepStatus
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

BUDGET = Budget(p99_ms=10.0)
OFFERED = 1000.0  # requests/s, each repeat 1 s


@dataclass(frozen=True)
class Rep:
    """A measured repeat: its latency histogram in the engine result, its figures read off it."""

    engine: EngineResult
    rps_ok: float
    error_rate: float = 0.0

    @property
    def requests(self) -> int:
        return self.engine.first_kind.latency.count  # type: ignore[union-attr]

    @property
    def latency_p99_us(self) -> float:
        return float(self.engine.first_kind.latency.p99)  # type: ignore[union-attr]

    @property
    def latency_p50_us(self) -> float:
        return float(self.engine.first_kind.latency.p50)  # type: ignore[union-attr]


def rep(
    latencies_us: dict[int, int],
    served: float = OFFERED,
    error_rate: float = 0.0,
    lag_us: int = 0,
    window_s: float | None = None,
) -> Rep:
    """A repeat whose requests took these latencies (µs: how many), serving `served` per s in its
    measured window (`window_s`, when recorded); the engine's schedule `lag_us` late at worst."""
    h = HdrHistogram(1, 3_600_000_000, 3)
    for value, count in latencies_us.items():
        h.record_value(value, count)
    kind = recorded("pong", h.get_total_count(), 1000) | {"latency_us": histogram_doc(h)}
    totals = {"window_s": window_s} if window_s else None
    return Rep(result(kinds=[kind], lag_max_us=lag_us, totals=totals), served, error_rate)


FAST = {1_000: 990, 3_000: 10}  # p99 1 ms (3 ms beyond it)
TIPPED = {1_000: 980, 50_000: 20}  # 2 % of its requests at 50 ms: its own p99 50 ms


def test_the_p99_is_that_of_all_the_steps_requests():
    step = judge_step(100, [rep(FAST), rep(FAST), rep(TIPPED)], BUDGET)
    # 20 of 3,000 requests at 50 ms: 0.67 %, so the p99 of the step is the fast repeats' 3 ms,
    # neither the slowest repeat's 50 ms nor a mean of the three
    assert (step.status, step.reason) == (StepStatus.MET, "p99 3 ms over 3 repeats")
    two = judge_step(100, [rep(FAST), rep(TIPPED)], BUDGET)  # 20 of 2,000: 1 %, still within
    assert two.status == StepStatus.MET
    worse = judge_step(100, [rep(FAST), rep({1_000: 970, 50_000: 30})], BUDGET)  # 1.5 %
    assert worse.status == StepStatus.MISSED
    assert worse.reason == "p99 50 ms > 10 ms over 2 repeats (1.5% of the requests over 10 ms)"


def test_a_repeat_that_tipped_for_a_moment_does_not_fail_a_step_that_kept_up_together():
    tipped = rep(FAST, served=0.86 * OFFERED)  # served 86 % of what was offered
    fine = [rep(FAST) for _ in range(4)]
    step = judge_step(100, [*fine[:2], tipped, *fine[2:]], BUDGET, offered_rps=OFFERED)
    assert step.status == StepStatus.MET and step.served == 0.86 * OFFERED  # 97.2 % together
    # alone it falls behind
    alone = judge_step(100, [tipped], BUDGET, offered_rps=OFFERED)
    assert alone.status == StepStatus.MISSED
    assert alone.reason == "860 valid replies/s of 1,000 offered: falling behind"
    # three such repeats of five do not keep up together
    behind = judge_step(100, [tipped, tipped, tipped, *fine[:2]], BUDGET, offered_rps=OFFERED)
    assert behind.status == StepStatus.MISSED
    assert behind.reason == "916 valid replies/s of 1,000 offered over 5 repeats: falling behind"


def test_errors_are_counted_over_every_request_of_the_step():
    few = judge_step(100, [rep(FAST), rep(FAST, error_rate=0.08)], BUDGET)  # 4 % of the step
    assert few.status == StepStatus.MET and few.errors
    many = judge_step(100, [rep(FAST), rep(FAST, error_rate=0.12)], BUDGET)  # 6 %
    assert many.status == StepStatus.MISSED
    assert many.reason == "errors 6.00% > 5.0% over 2 repeats"


def test_a_verdict_is_known_once_flawless_repeats_left_could_not_make_it_meet():
    slow = rep({1_000: 940, 50_000: 60})  # 6 % of its requests over the budget
    # of 5 repeats: 60 of at least 5,000 requests is over 1 % whatever the other four give
    assert verdict_known([slow], BUDGET, OFFERED, planned=5) == (
        "p99 50 ms > 10 ms (6.0% of the requests over 10 ms): a miss whatever the 4 repeats left "
        "give"
    )
    # 2 % of one repeat's requests could be made up by 4 flawless ones (0.4 %): not known yet
    assert verdict_known([rep(TIPPED)], BUDGET, OFFERED, planned=5) == ""
    # falling behind: 40 % of one repeat short is 8 % of five, past the 5 % a step may be
    far_behind = rep(FAST, served=0.6 * OFFERED)
    assert verdict_known([far_behind], BUDGET, OFFERED, planned=5).startswith(
        "600 valid replies/s of 1,000 offered: falling behind: a miss whatever"
    )
    assert verdict_known([rep(FAST, served=0.86 * OFFERED)], BUDGET, OFFERED, planned=5) == ""
    # at the last repeat nothing is left to make up for it: the step's own verdict
    last = [rep(FAST), rep(FAST), rep({1_000: 960, 50_000: 40})]  # 40 of 3,000: 1.3 %
    assert verdict_known(last, BUDGET, OFFERED, planned=3).startswith("p99 50 ms > 10 ms")
    assert judge_step(100, last, BUDGET).status == StepStatus.MISSED


def test_a_starved_engine_that_kept_its_schedule_bounds_what_a_miss_can_be():
    starved = f"{BOTTLENECK}engine starved: it waited for its CPU(s) [1] 8 % of the time"
    fine = [rep(FAST, lag_us=2000) for _ in range(5)]
    # met although the engine was up to 2 ms late: met
    met = starved_on_schedule(10, starved, fine, BUDGET, calls=100)
    assert met is not None and met.status == StepStatus.MET
    assert met.reason.endswith("kept its schedule (worst lag 2 ms), which only adds latency")
    # 20 % short with one request an arrival: far beyond 2 ms of a 1 s repeat, the server's
    short = [rep(FAST, served=0.8 * OFFERED, lag_us=2000) for _ in range(5)]
    missed = starved_on_schedule(1000, starved, short, BUDGET, calls=1)
    assert missed is not None and missed.status == StepStatus.MISSED
    # with 100 requests a connection the later ones follow the replies, off the schedule: a
    # starved engine could have slowed them, so falling behind is not the server's
    assert starved_on_schedule(10, starved, short, BUDGET, calls=100) is None
    # nor is a p99 within twice the lag of the budget; far beyond it, it is
    near = [rep({1_000: 950, 13_000: 50}, lag_us=2000) for _ in range(5)]
    assert starved_on_schedule(1000, starved, near, BUDGET, calls=1) is None
    far = [rep({1_000: 950, 50_000: 50}, lag_us=2000) for _ in range(5)]
    assert starved_on_schedule(1000, starved, far, BUDGET, calls=100).status == StepStatus.MISSED
    # an engine limited by its own account (its CPU, its lag) is never judged
    own = [replace(r, engine=replace(r.engine, saturated=True)) for r in fine]
    assert starved_on_schedule(10, starved, own, BUDGET, calls=100) is None
    assert starved_on_schedule(10, "load host lost", fine, BUDGET, calls=100) is None


def test_a_miss_beyond_the_engines_lag_is_judged_on_the_repeats_together():
    lagged = f"{BOTTLENECK}schedule lag p99 5000 us > 1000 us"
    # one repeat of five tipped to 50 ms, far beyond the budget plus twice the 2 ms lag, but the
    # step's requests together kept their p99 within it: no miss to give the server (invalid)
    tipped = [rep(FAST, lag_us=2000) for _ in range(4)] + [rep(TIPPED, lag_us=2000)]
    assert missed_beyond_lag(lagged, tipped, BUDGET) == ""
    # three of five so: the p99 of all their requests is 50 ms, the server's miss
    worse = [rep(FAST, lag_us=2000) for _ in range(2)] + [rep(TIPPED, lag_us=2000)] * 3
    reason = missed_beyond_lag(lagged, worse, BUDGET)
    assert reason.startswith("p99 50 ms > 14 ms over 5 repeats (1.2% of the requests over 14 ms)")
    assert reason.endswith("worst schedule lag (2 ms), the server's miss")
    # the widened budget takes the worst lag of any repeat
    assert missed_beyond_lag(lagged, [*worse[:4], rep(TIPPED, lag_us=21_000)], BUDGET) == ""
    # any other engine limit leaves the step invalid, however far past the budget
    assert (
        missed_beyond_lag(f"{BOTTLENECK}engine CPU >= 95% in 3 of 5 seconds", worse, BUDGET) == ""
    )


SLEEPY = {50_000: 990, 52_000: 10}  # every reply 50-52 ms, as a sleeping app's
SLOW_BUDGET = Budget(p99_ms=200.0)


def test_replies_in_flight_at_the_windows_end_are_not_falling_behind():
    # 1,000 requests/s in a 1 s window: those due in its last 50 ms are answered after it (the
    # engine's drain), 5 % of the offer, which the keep-up margin alone would call falling behind
    in_flight = judge_step(100, [rep(SLEEPY, 950, window_s=1.0)], SLOW_BUDGET, offered_rps=OFFERED)
    assert in_flight.status == StepStatus.MET, in_flight.reason
    # 85 % of the offer is 89.5 % of what a server keeping up answers in the window: behind
    short = judge_step(100, [rep(SLEEPY, 850, window_s=1.0)], SLOW_BUDGET, offered_rps=OFFERED)
    assert (short.status, short.reason) == (
        StepStatus.MISSED,
        "850 valid replies/s of 1,000 offered (950 answerable in the window): falling behind",
    )
    # a 2 s window halves the share in flight (975 answerable): 92 % of the offer is short there
    longer = judge_step(100, [rep(SLEEPY, 920, window_s=2.0)], SLOW_BUDGET, offered_rps=OFFERED)
    assert longer.status == StepStatus.MISSED
    met = judge_step(100, [rep(SLEEPY, 930, window_s=2.0)], SLOW_BUDGET, offered_rps=OFFERED)
    assert met.status == StepStatus.MET
    # without a recorded window (a store from before it) the whole offer is asked for
    unknown = judge_step(100, [rep(SLEEPY, 950)], SLOW_BUDGET, offered_rps=OFFERED)
    assert unknown.status == StepStatus.MET  # 95 % exactly: the margin
    assert judge_step(100, [rep(SLEEPY, 940)], SLOW_BUDGET, offered_rps=OFFERED).status == (
        StepStatus.MISSED
    )


def test_a_connections_later_requests_follow_its_replies_within_the_window():
    # 3 calls a connection, each reply 50 ms: a connection arriving at t answers min(3, (1 - t) /
    # 0.05) of its requests in a 1 s window, 90 % of the offer in all
    offer = 3 * OFFERED
    kept = judge_step(
        100, [rep(SLEEPY, 2_700, window_s=1.0)], SLOW_BUDGET, offered_rps=offer, calls=3
    )
    assert kept.status == StepStatus.MET, kept.reason
    behind = judge_step(
        100, [rep(SLEEPY, 2_500, window_s=1.0)], SLOW_BUDGET, offered_rps=offer, calls=3
    )
    assert behind.status == StepStatus.MISSED
    assert "(2,700 answerable in the window)" in behind.reason


def test_a_growing_queue_is_never_taken_for_replies_in_flight():
    # the fastest 1 % are the replies before the queue formed (1 ms); the rest queued up to
    # 150 ms: what is answerable is judged by the fastest, so 90 % of the offer is behind
    queued = {1_000: 100, 50_000: 300, 100_000: 300, 150_000: 300}
    step = judge_step(100, [rep(queued, 900, window_s=1.0)], SLOW_BUDGET, offered_rps=OFFERED)
    assert step.status == StepStatus.MISSED
    assert step.reason.startswith("900 valid replies/s of 1,000 offered: falling behind")


def test_a_step_whose_fastest_reply_outlasts_the_window_is_not_judged_on_its_replies():
    slow = judge_step(
        100, [rep({1_500_000: 100}, 0, window_s=1.0)], Budget(p99_ms=2_000.0), offered_rps=OFFERED
    )
    assert slow.status == StepStatus.MET  # none could be answered within 1 s; 1.5 s is within
