"""Cell planning: the order in which a study's cells run (loads, levels ascending, servers shuffled)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from wsgibench.results.engine_plan import EnginePlan
from wsgibench.results.repeat import Repeat
from wsgibench.study.loads import Load
from wsgibench.study.model import Study


@dataclass(frozen=True)
class CellPlan:
    position: int
    server: str
    load: Load
    level: float
    repeats: int | None = None  # the most repeats it runs (None: the study's)
    starts: int | None = None  # the server starts they are spread over (None: the study's)
    # One start's share of the cell (run/cell.py): the start's index, its first repeat's index and
    # its number of repeats (None: all of them).
    start: int = 0
    first_repeat: int = 0
    share: int | None = None
    # Asked after each repeat but the last, with the repeats so far: a reason to run no more (the
    # verdict is known), or "".
    stop_at: Callable[[Sequence[Repeat]], str] | None = field(default=None, compare=False)
    # The stored cell this one runs again and takes the place of (a capacity step the machine
    # limited: results/capacity.py), if any.
    replaces: int | None = field(default=None, compare=False)

    @property
    def key(self) -> tuple[str, str, float]:
        """What identifies the cell in the store: server, load name, level."""
        return (self.server, self.load.name, float(self.level))

    def start_count(self, study: Study) -> int:
        """The server starts its repeats are spread over: its own or the study's `starts`, at
        most one a repeat."""
        return max(1, min(self.starts or study.starts, self.repeats or study.repeats))

    def shares(self, study: Study) -> list[int]:
        """The repeats of each start, as even as they go (the first starts one more)."""
        starts, repeats = self.start_count(study), self.repeats or study.repeats
        return [repeats // starts + (k < repeats % starts) for k in range(starts)]

    @property
    def label(self) -> str:
        return f"{self.server} · {self.load.name} {self.load.level_field}={self.level:g}"


def plan_cells(study: Study) -> list[CellPlan]:
    """Loads in order, levels ascending, servers shuffled within each level (seed 004)."""
    rng = random.Random(study.seed)
    cells: list[CellPlan] = []
    for load in study.loads:
        for level in sorted(load.levels):
            servers = list(study.servers_of(load))
            if study.random_order:
                rng.shuffle(servers)
            first = len(cells)  # not inside the generator: extend grows the list as it goes
            cells.extend(CellPlan(first + i, s, load, level) for i, s in enumerate(servers))
    return cells


# What a TLS load's plan carries for its CA until the server's certificate is made.
STAND_IN_CA = (
    "-----BEGIN CERTIFICATE-----\n(made when the server starts)\n-----END CERTIFICATE-----\n"
)


def every_plan(study: Study) -> list[tuple[str, EnginePlan]]:
    """Every plan a run of the study gives the engine, each load at each level with its warm-up
    (when it has one), and where it comes from; the port and a TLS load's CA are stand-ins (the
    server's are made at start), so the engine can check the plans before anything starts."""
    found = []
    for load in study.loads:
        # A capacity load's rates are chosen as it runs: its first one stands for them all.
        levels = load.levels or ((load.capacity.start_rate,) if load.capacity else ())
        for level in levels:
            for warmup in (False, True) if load.warmup_s > 0 else (False,):
                plan = load.plan(
                    level=level,
                    port=1,
                    requests=list(study.requests_of(load)),
                    cpus=None,
                    seed=study.seed,
                    warmup=warmup,
                    threads=1,
                    host=study.server_host,
                    tls_ca_pem=STAND_IN_CA if load.tls else None,
                )
                what = " (warm-up)" if warmup else ""
                found.append(
                    (f"[[load]] {load.name!r} at {load.level_field} {level:g}{what}", plan)
                )
    return found
