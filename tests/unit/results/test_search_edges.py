"""The capacity search's edges a mutation run found untested (bench/mutation): its step limit
counted without the steps run again, the limit said in the result, a step the machine limited run
again only once and never a first step's rerun refused, and a seed equal to the start taken as no
seed."""

from __future__ import annotations

from wsgibench.results.capacity import Search, Step, StepStatus


def _search(*steps: Step, **kwargs) -> Search:
    search = Search(start=100, **kwargs)
    for step in steps:
        search.record(step)
    return search


def met(rate: float) -> Step:
    return Step(rate, StepStatus.MET, "")


def limited(rate: float) -> Step:
    """A step the machine limited (other work held the engine's CPU): run again once."""
    return Step(rate, StepStatus.INVALID, "engine starved", harness=True, machine=True)


def test_the_step_limit_counts_the_steps_that_stand():
    assert _search(met(100), met(200), max_steps=2).next_rate() is None
    # a step run again is not counted twice: 100, 200 (limited), 200 again are two steps
    assert _search(met(100), limited(200), met(200), max_steps=3).next_rate() == 400
    wide = _search(met(100), Step(1000, StepStatus.MISSED, ""), max_steps=2).result()
    assert wide.stopped == "step limit (2) reached"


def test_a_step_the_machine_limited_is_run_again_once():
    assert _search(limited(100)).next_rate() == 100  # the first step too
    assert _search(limited(100), limited(100)).next_rate() is None
    assert _search(met(50), limited(100)).next_rate() == 100


def test_a_seed_no_higher_than_the_start_is_no_seed():
    assert _search(met(100), second=100).next_rate() == 200
    assert _search(met(100), second=150).next_rate() == 150
