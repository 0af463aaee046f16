"""Capacities side by side: a capacity's uncertainty (its bisection interval, from the highest rate
that met the budget to the lowest above it that missed, widened on each side by the search's own
noise, `CAPACITY_NOISE`), two capacities told apart only when those do not overlap, and two stored
studies' capacities per capacity load and server, worded by that rule."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from wsgibench.results.capacity_read import ServerCapacity, capacity_loads, read_capacities
from wsgibench.results.store import Store

# How far one capacity search of a server can land from another of the same server on the same
# machine, as a share of it: bench/capacity_repeat found bjoern at 46,000 and 52,000 requests/s
# in two runs of one afternoon and 48,000 to 56,000 on another (docs/measurement.md), so a search
# is taken to be within ±10 % of the server's capacity. Two capacities are apart only beyond it;
# `wsgibench calibrate --capacity` measures how often identical servers still are.
CAPACITY_NOISE = 0.10


def requests_interval(c: ServerCapacity, noise: float = 0.0) -> tuple[float, float]:
    """Where the capacity lies, in requests/s: at least the highest rate that met the budget (0
    when none did), below the lowest rate above it that missed (no miss: no bound); each end
    moved out by `noise` (a share)."""
    low = c.requests(c.result.capacity) or 0.0
    high = c.requests(c.result.above)
    return low * (1 - noise), math.inf if high is None else high * (1 + noise)


def uncertainty(c: ServerCapacity) -> tuple[float, float]:
    """The capacity's uncertainty: its interval widened by the search's noise (CAPACITY_NOISE)."""
    return requests_interval(c, CAPACITY_NOISE)


def overlaps(a: ServerCapacity, b: ServerCapacity, noise: float = CAPACITY_NOISE) -> bool:
    """Whether the two capacities could be the same rate: their intervals, each widened by
    `noise` (the search's, by default; 0: the bisection intervals alone), share a rate."""
    (a_low, a_high), (b_low, b_high) = requests_interval(a, noise), requests_interval(b, noise)
    return a_low < b_high and b_low < a_high


@dataclass(frozen=True)
class CapacityChange:
    load: str
    server: str
    a: ServerCapacity | None  # None: no such capacity load and server in A
    b: ServerCapacity | None

    @property
    def change(self) -> float | None:
        """B's capacity against A's (0.1: 10 % higher); None without both."""
        if self.a is None or self.b is None:
            return None
        ca, cb = self.a.requests(self.a.result.capacity), self.b.requests(self.b.result.capacity)
        return cb / ca - 1 if ca and cb is not None else None

    @property
    def budgets_differ(self) -> bool:
        return self.a is not None and self.b is not None and self.a.budget != self.b.budget

    @property
    def changed(self) -> bool:
        """Only when their uncertainties (`uncertainty`) do not overlap, under the same budget."""
        if self.a is None or self.b is None or self.budgets_differ:
            return False
        if not self.a.result.capacity or not self.b.result.capacity:
            return False
        return not overlaps(self.a, self.b)

    @property
    def verdict(self) -> str:
        """By the rule: not tested (a side missing, or no capacity found), no change detected
        (the intervals overlap), change within noise (only the search's noise joins them),
        improved or regressed."""
        if self.a is None or self.b is None:
            return "only in A" if self.b is None else "only in B"
        if self.budgets_differ:
            return (
                f"not comparable: budgets differ ({self.a.budget.describe()} vs "
                f"{self.b.budget.describe()})"
            )
        if not self.a.result.capacity or not self.b.result.capacity:
            return "not tested: no capacity found on a side"
        if overlaps(self.a, self.b, 0.0):
            return "no change detected: the intervals overlap"
        if not self.changed:
            return f"change within noise: apart, but within ±{CAPACITY_NOISE:.0%} of a search"
        higher = requests_interval(self.b)[0] >= requests_interval(self.a)[1]
        return "improved: higher" if higher else "regressed: lower"


def _capacities(store: Store, study_id: int) -> dict[tuple[str, str], ServerCapacity]:
    config = json.loads(store.study(study_id)["config_json"])
    if not capacity_loads(config):
        return {}
    return {(c.load, c.server): c for c in read_capacities(store, study_id)}


def compare_capacities(
    store_a: Store, study_a: int, store_b: Store, study_b: int
) -> list[CapacityChange]:
    """Per capacity load and server of either study, its capacity in A and in B."""
    a, b = _capacities(store_a, study_a), _capacities(store_b, study_b)
    return [
        CapacityChange(load, server, a.get((load, server)), b.get((load, server)))
        for load, server in sorted(set(a) | set(b))
    ]


def capacity_load_names(store: Store, study_id: int) -> set[str]:
    """The names of a study's capacity loads (their cells are steps, not levels to compare)."""
    return set(capacity_loads(json.loads(store.study(study_id)["config_json"])))
