"""The lead of a cluster's common start grows when the start reached a host with little of it to
spare, or late, and never shrinks: a slow scheduler does not make every later cell start apart."""

from __future__ import annotations

import pytest

from wsgibench.run.cluster import MAX_LEAD_S, START_LEAD_S, next_lead


def test_a_start_with_time_to_spare_keeps_the_lead():
    assert next_lead(START_LEAD_S, [0.29, 0.25, 0.2]) == START_LEAD_S
    assert next_lead(START_LEAD_S, [None, None]) == START_LEAD_S


def test_a_start_that_came_late_doubles_the_time_it_took():
    # reached one host 20 ms after its instant: it took 320 ms, so the next lead is 640 ms
    assert next_lead(0.3, [0.28, -0.020]) == pytest.approx(0.64)
    # reached with 50 ms of 300 to spare: 250 ms, doubled
    assert next_lead(0.3, [0.05]) == pytest.approx(0.5)


def test_the_lead_is_bounded_and_never_shrinks():
    assert next_lead(0.3, [-10.0]) == MAX_LEAD_S
    assert next_lead(2.0, [0.9]) == 2.0
