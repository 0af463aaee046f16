"""Tuning a server's own settings: workers, threads, the runtime mode where the server has one
(Granian's st and mt) and, across a family of entries (gunicorn-*), the worker class. Every
setting is a trial, a capacity search within the latency budget stored like any study's cells;
successive halving spends the time on the promising ones (all of them coarsely first, the better
half again finer, ...). The settings whose capacity is within noise of the best's are tied, and
the cheapest of them (CPU per request, then memory) is recommended, printed as the command line
to deploy."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wsgibench.results.capacity_compare import CAPACITY_NOISE
from wsgibench.results.capacity_read import ServerCapacity
from wsgibench.servers import get

# Each round: the search's resolution, repeats per step and seconds per repeat.
ROUNDS: tuple[tuple[float, int, float], ...] = ((0.2, 1, 1.0), (0.1, 2, 1.5), (0.05, 3, 2.0))
THREADS = (1, 2, 4, 8, 16, 32)
MEMORY_WORDS = ("memory limit", "OOM")


@dataclass(frozen=True)
class Setting:
    server: str
    workers: int
    threads: int
    mode: str | None = None  # the server's runtime mode (None: it has none)

    @property
    def label(self) -> str:
        return f"{self.server} w{self.workers} t{self.threads}" + (
            f" {self.mode}" if self.mode else ""
        )


@dataclass(frozen=True)
class Trial:
    setting: Setting
    round: int
    capacity: float | None  # requests/s within the budget (None: missed at the lowest rate)
    interval: tuple[float | None, float | None]
    cpu_us: float | None  # server CPU per request at capacity
    rss_mib: float | None
    broke: str | None = None  # why the setting broke the memory limit, or could not run
    # Why the search stopped on the harness's limit (the engine was the bottleneck): the capacity
    # is then a lower bound, and the setting is still in the running.
    limited: str | None = None
    # The capacity and the rate above it in the load's own rates (connections/s with `calls`):
    # where the setting's next round starts its search.
    rates: tuple[float | None, float | None] = (None, None)

    def rank_key(self) -> tuple[float, float, float]:
        """Capacity first; ties by CPU per request, then memory."""
        return (-(self.capacity or 0.0), self.cpu_us or math.inf, self.rss_mib or math.inf)

    def cost_key(self) -> tuple[float, float, float]:
        """CPU per request first, then memory, then the higher capacity."""
        return (self.cpu_us or math.inf, self.rss_mib or math.inf, -(self.capacity or 0.0))


def _band(t: Trial) -> tuple[float, float]:
    """A trial's capacity with its uncertainty, in requests/s: its interval widened by a
    search's noise (no rate above: no bound)."""
    low, high = t.interval
    noise = CAPACITY_NOISE
    return (low or 0.0) * (1 - noise), math.inf if high is None else high * (1 + noise)


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@dataclass
class Tuning:
    trials: list[Trial] = field(default_factory=list)
    ranking: list[Trial] = field(default_factory=list)  # the last round, best first
    stopped: str = ""
    untried: list[Setting] = field(default_factory=list)  # never run: the trial or time budget

    @property
    def best(self) -> Trial | None:
        """The highest capacity of the last round that met the budget somewhere and did not
        break: a search the harness cut short counts with its lower bound."""
        usable = [t for t in self.ranking if t.capacity and not t.broke]
        return usable[0] if usable else None

    @property
    def tied(self) -> list[Trial]:
        """The last round's settings within noise of the best: their capacities' uncertainties
        (the interval widened by a search's noise, results/capacity_compare.py) overlap its."""
        best = self.best
        if best is None:
            return []
        return [
            t
            for t in self.ranking
            if t.capacity and not t.broke and _overlap(_band(t), _band(best))
        ]

    @property
    def winner(self) -> Trial | None:
        """The one to deploy: of the settings tied with the best (`tied`), the cheapest, by CPU
        per request at capacity, then memory; the best itself when nothing ties with it."""
        tied = self.tied
        return min(tied, key=Trial.cost_key) if tied else None

    def winners(self) -> list[Trial]:
        """Each server's own winner, by the same rule among its own settings in the last round
        it ran in (a server left behind in an earlier round: that round's)."""
        out = []
        for server in dict.fromkeys(t.setting.server for t in self.trials):
            mine = [t for t in self.trials if t.setting.server == server]
            last = max(t.round for t in mine)
            alone = Tuning(ranking=sorted((t for t in mine if t.round == last), key=Trial.rank_key))
            if alone.winner is not None:
                out.append(alone.winner)
        return out


def spread(values: list[int]) -> list[int]:
    """Values in an order that covers their range first: the ends, then the middles ([1, 2, 4,
    8, 16, 32] as 1, 32, 4, 2, 8, 16)."""
    if len(values) <= 2:
        return list(values)
    out, spans = [values[0], values[-1]], [(0, len(values) - 1)]
    while spans:
        lo, hi = spans.pop(0)
        mid = (lo + hi) // 2
        if lo < mid < hi:
            out.append(values[mid])
            spans += [(lo, mid), (mid, hi)]
    return out


def coverage_order(settings: list[Setting]) -> list[Setting]:
    """The settings in the order trials take them, so that a trial budget covers the space: at
    each thread count in `spread` order, every server, runtime mode and worker count before
    the next thread count (every worker count is tried before a second thread count of one)."""
    rank = {t: i for i, t in enumerate(spread(sorted({s.threads for s in settings})))}
    groups = list(dict.fromkeys((s.server, s.mode) for s in settings))
    workers = sorted({s.workers for s in settings})
    return sorted(
        settings,
        key=lambda s: (rank[s.threads], workers.index(s.workers), groups.index((s.server, s.mode))),
    )


def settings_for(
    servers: list[str],
    cpus: int,
    max_threads: int = 32,
    workers: list[int] | None = None,
    threads: list[int] | None = None,
) -> list[Setting]:
    """Workers 1, N and 2N+1 for N server CPUs where the server forks them; threads 1..32 where it
    sizes a pool; each runtime mode where it has them (a family of entries: each entry its own
    worker class); or the counts given."""
    out = []
    for name in servers:
        recipe = get(name)
        own_workers = workers or sorted({1, cpus, 2 * cpus + 1})
        own_threads = threads or [t for t in THREADS if t <= max_threads]
        modes: tuple[str | None, ...] = recipe.runtime_modes or (None,)
        out += [
            Setting(name, w, t, m)
            for m in modes
            for w in (own_workers if recipe.multi_worker else [1])
            for t in (own_threads if recipe.takes_threads else [1])
        ]
    return out


def trial_loads(
    settings: list[Setting],
    round_: int,
    budget: dict[str, Any],
    start_rate: float,
    before: dict[Setting, Trial] | None = None,
) -> list[dict[str, Any]]:
    """One capacity load per setting for this round ([[load]] tables, as a study file has them).
    A setting that found a capacity in the round `before` starts its search there and tries the
    rate above it next: the knee bracketed in two steps, which this round measures itself, then
    bisected to the round's finer resolution. The cost cells (25, 50, 75 % of the capacity) run
    in the last round only: a trial is ranked by the CPU of its capacity step."""
    resolution, repeats, duration = ROUNDS[round_]
    return [
        {
            "name": f"r{round_ + 1} {s.label}",
            "model": "capacity",
            **budget,
            "resolution": resolution,
            "step_repeats": repeats,  # the round's, as its study's repeats
            "duration_s": duration,
            "warmup_s": 0.5,
            "start_rate": start_rate,
            **_seeded((before or {}).get(s)),
            "cost_cells": round_ == len(ROUNDS) - 1,
            "servers": [s.server],
            "workers": s.workers,
            "threads": s.threads,
            **({"runtime_mode": s.mode} if s.mode else {}),
        }
        for s in settings
    ]


def _seeded(trial: Trial | None) -> dict[str, float]:
    """Where a setting's search starts after a round that found its capacity (and the rate above
    it, unless that search had no miss: the harness or the search's ceiling stopped it)."""
    found, above = trial.rates if trial is not None else (None, None)
    if not found:
        return {}
    seed: dict[str, float] = {"start_rate": found}
    if above is not None and above > found:
        seed["second_rate"] = above
    return seed


def pool_note(pool: int | None, settings: list[Setting]) -> str | None:
    """A pool keeps at most one request in flight per connection: a setting that serves more at
    once than the pool has connections cannot show it."""
    most = max((s.workers * s.threads for s in settings), default=0)
    if not pool or most <= pool:
        return None
    return (
        f"note: a pool of {pool} connections keeps at most {pool} requests in flight; settings "
        f"with more than {pool} workers × threads (up to {most} here) cannot show more"
    )


RunRound = Callable[[list[dict[str, Any]], int, float], list[ServerCapacity]]


def tune(
    settings: list[Setting],
    run_round: RunRound,
    budget: dict[str, Any],
    *,
    start_rate: float = 10.0,
    max_trials: int = 64,
    time_budget_s: float = 1800.0,
    progress: Callable[[str], None] = lambda _m: None,
) -> Tuning:
    """Successive halving over the settings, taken in `coverage_order` up to the trial budget:
    each round runs the survivors' trials (run_round gets their loads, the round and the
    monotonic deadline after which it starts no trial, and returns their capacities), keeps the
    better half and any setting tied within noise with the best (`Tuning.tied`), and ends when
    one is left, the rounds are done, or the trials or time run out (the first round too)."""
    ordered = coverage_order(settings)
    out, alive, started = Tuning(), ordered[:max_trials], time.monotonic()
    out.untried = ordered[max_trials:]
    deadline = started + time_budget_s
    if out.untried:
        progress(_budget_note(len(alive), len(ordered), alive))
    if note := pool_note(budget.get("pool"), settings):
        progress(note)
    for round_ in range(len(ROUNDS)):
        progress(f"tune round {round_ + 1}: {len(alive)} setting(s)")
        before = {t.setting: t for t in out.trials if t.round == round_ - 1}
        loads = trial_loads(alive, round_, budget, start_rate, before)
        found = {c.load: c for c in run_round(loads, round_, deadline)}
        ran = [s for s in alive if f"r{round_ + 1} {s.label}" in found]
        late = time.monotonic() >= deadline
        if round_ == 0 and late:  # settings the time left untried: never trials
            out.untried = [s for s in alive if s not in ran] + out.untried
            alive = ran
        trials = [_trial(s, round_, found.get(f"r{round_ + 1} {s.label}")) for s in alive]
        out.trials += [t for t in trials if not late or t.setting in ran]
        if this := [t for t in out.trials if t.round == round_]:  # none ran: the last ranking
            out.ranking = sorted(this, key=Trial.rank_key)
        left = max_trials - len(out.trials)
        if len(alive) <= 1 or round_ == len(ROUNDS) - 1:
            out.stopped = "every round run" if len(alive) > 1 else "one setting left"
            break
        if late or left <= 0:
            out.stopped = _stopped(late, time_budget_s, round_)
            break
        keep = max(1, min(left, math.ceil(len(alive) / 2)))
        better = [t.setting for t in out.ranking if not t.broke][:keep] or alive[:1]
        tied = [t.setting for t in out.tied if t.setting not in better]  # never cut for noise
        alive = (better + tied)[: max(keep, min(left, len(better) + len(tied)))]
    return out


def _budget_note(tried: int, of: int, alive: list[Setting]) -> str:
    """What a trial budget smaller than the settings leaves out, said before the first round."""
    workers = sorted({s.workers for s in alive})
    threads = sorted({s.threads for s in alive})
    return (
        f"trials: {tried} of {of} settings, chosen to cover the space (each worker count at "
        f"thread counts {', '.join(map(str, threads))} first; workers {', '.join(map(str, workers))}"
        "); the others are not tried (--trials)"
    )


def _stopped(late: bool, time_budget_s: float, round_: int) -> str:
    """Why the tuning stopped before its rounds were done; its ranking coarse after round 1."""
    why = f"the time budget ({time_budget_s:g} s)" if late else "the trial budget"
    if round_ == 0:
        resolution, repeats, _ = ROUNDS[0]
        why += (
            f"; the ranking is round 1's, coarse (capacities ±{resolution:.0%}, "
            f"{repeats} repeat a step): more time refines it"
        )
    return why


def _trial(setting: Setting, round_: int, found: ServerCapacity | None) -> Trial:
    if found is None:
        return Trial(setting, round_, None, (None, None), None, None, "no result stored")
    r = found.result
    full = found.cost_at(1.0)
    broke = next(
        (s.reason for s in r.steps if any(w in s.reason for w in MEMORY_WORDS)),
        None,
    )
    return Trial(
        setting,
        round_,
        found.requests(r.capacity),
        (found.requests(r.capacity), found.requests(r.above)),
        full.cpu_us_per_request if full else None,
        full.rss_mib if full else None,
        broke or (r.could_not_run and f"could not run: {r.could_not_run}") or None,
        r.invalid if r.lower_bound and not broke else None,
        (r.capacity, r.above),
    )


def threads_trend(trials: list[Trial]) -> list[str]:
    """What more threads did, per server, workers and runtime mode, in the first round (where
    every setting ran): better up to a count, or no better."""
    lines = []
    first = [t for t in trials if t.round == 0]

    def group(t: Trial) -> tuple[str, int, str]:
        return (t.setting.server, t.setting.workers, t.setting.mode or "")

    for key in sorted({group(t) for t in first}):
        row = sorted((t for t in first if group(t) == key), key=lambda t: t.setting.threads)
        if len(row) < 2:
            continue
        caps = [t.capacity or 0.0 for t in row]
        best = max(range(len(row)), key=lambda i: caps[i])
        said = ", ".join(f"t{t.setting.threads} {c:,.0f}" for t, c in zip(row, caps, strict=True))
        if best == 0:
            verdict = "more threads were no better"
        else:
            verdict = f"more threads were better up to {row[best].setting.threads}"
            if any(t.broke for t in row[best + 1 :]):
                verdict += " (more broke the memory limit or could not run)"
        mode = f" {key[2]}" if key[2] else ""
        lines.append(f"{key[0]} w{key[1]}{mode}: {verdict} (req/s within the budget: {said})")
    return lines
