"""A/A calibration: the same server run as two entries (`server` and `server#b`), pair after pair,
each pair judged by the rules every claim uses (the leader's "ahead", compare's "changed", the
capacity's "above"), and how often identical servers were called apart, kept in the store per
machine with the rules' nominal level, for the report to cite beside its claims."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from wsgibench.results.capacity_compare import CAPACITY_NOISE, CapacityChange
from wsgibench.results.capacity_read import capacity_loads, read_capacities
from wsgibench.results.compare import (
    METRICS,
    CellChange,
    adjust,
    comparable_metadata,
)
from wsgibench.results.repeat import start_of
from wsgibench.results.significance import ALPHA, compare_starts, grouped
from wsgibench.results.store import Store
from wsgibench.results.verdict import CellStatus

PREFIX = "calibration:"
TWIN = "#b"  # the second entry of the server: the same recipe under another name


@dataclass(frozen=True)
class Pair:
    """One pair's verdicts between the two identical entries."""

    study_id: int
    tested: bool  # a test was possible (both cells measured, at least 2 starts of each)
    ahead: bool  # the leader's rule called one ahead at some level
    changed: bool  # compare's rule (FDR over cells and metrics): only a tested pair can be
    above: bool | None  # the capacity rule called one above (None: nothing compared, `_above`)


def judge_pair(store: Store, study_id: int, server: str, twin: str) -> Pair:
    """The two entries' cells of one study judged against each other, level by level."""
    searched = set(capacity_loads(json.loads(store.study(study_id)["config_json"])))
    cells = {
        (c.server, c.load, c.level): c
        for c in store.cells(study_id)
        if c.load not in searched and c.status == CellStatus.MEASURED
    }
    changes, tested, ahead = [], False, False
    for (name, load, level), cell in sorted(cells.items()):
        other = cells.get((twin, load, level))
        if name != server or other is None:
            continue
        reps_a, reps_b = store.stored_repeats(cell.id), store.stored_repeats(other.id)
        change = CellChange(name, load, level, cell.status, other.status, cell.id, other.id)
        for metric, _, _ in METRICS:
            va = grouped((start_of(r), r.column(metric)) for r in reps_a)
            vb = grouped((start_of(r), r.column(metric)) for r in reps_b)
            if va and vb:
                change.verdicts[metric] = compare_starts(va, vb)
        if "rps_ok" in change.verdicts:
            tested |= change.verdicts["rps_ok"].testable
            ahead |= change.verdicts["rps_ok"].beyond_noise
            changes.append(change)
    adjust(changes)
    changed = any(c.outcome.startswith(("improved", "regressed", "mixed")) for c in changes)
    return Pair(study_id, tested, ahead, changed, _above(store, study_id, server, twin, searched))


def _above(store: Store, study_id: int, server: str, twin: str, searched: set[str]) -> bool | None:
    """Whether the capacity rule called one entry above the other; None when it judged nothing:
    no capacity load, or no load where both searches found a capacity the machine left alone (a
    search the machine spoiled is never compared, so it cannot count as "together")."""
    found = {(c.load, c.server): c for c in read_capacities(store, study_id)} if searched else {}
    judged = [
        CapacityChange(load, server, a, b).changed
        for load in searched
        if (a := found.get((load, server))) is not None
        and (b := found.get((load, twin))) is not None
        and all(c.result.capacity and c.result.invalid is None for c in (a, b))
    ]
    return any(judged) if judged else None


@dataclass(frozen=True)
class Calibration:
    """A server's pairs on one machine: how often its two identical entries were called apart."""

    server: str
    sizes: str  # the study the pairs ran, as run (its load, level, repeats and starts)
    machine: dict[str, Any]  # what must match for a run to cite it (compare's metadata)
    pairs: tuple[Pair, ...]
    started_unix_s: float
    seconds: float
    alpha: float = ALPHA
    capacity_noise: float = CAPACITY_NOISE
    studies: tuple[int, ...] = field(default_factory=tuple)

    @property
    def tested(self) -> int:
        return sum(p.tested for p in self.pairs)

    @property
    def ahead(self) -> int:
        return sum(p.ahead for p in self.pairs)

    @property
    def changed(self) -> int:
        return sum(p.changed for p in self.pairs)

    @property
    def capacity_pairs(self) -> int:
        """The pairs whose capacities were compared (both found, neither spoiled)."""
        return sum(p.above is not None for p in self.pairs)

    @property
    def above(self) -> int:
        return sum(bool(p.above) for p in self.pairs)

    def summary(self) -> str:
        """The rates in one line, with the nominal level and what the pairs cost."""
        text = (
            f"{self.server} against itself, {len(self.pairs)} pair(s) of {self.sizes}: "
            f"ahead in {self.ahead} of {self.tested} tested, changed in {self.changed} of "
            f"{self.tested}"
        )
        if self.capacity_pairs:
            text += f", capacity above in {self.above} of {self.capacity_pairs}"
        return (
            text + f" (nominal {self.alpha:.0%}; capacity noise ±{self.capacity_noise:.0%}); "
            f"{self.seconds:,.0f} s, {self.seconds / max(1, len(self.pairs)):,.0f} s a pair"
        )


def save_calibration(store: Store, calibration: Calibration) -> None:
    store.put_meta(f"{PREFIX}{calibration.studies[0]}", json.dumps(asdict(calibration)))


def calibrations(store: Store, environment: dict[str, Any] | None = None) -> list[Calibration]:
    """Every calibration the store keeps (of the machine `environment` names, when given)."""
    found = []
    for value in store.meta_values(PREFIX):
        raw: dict[str, Any] = json.loads(value)
        raw["pairs"] = tuple(Pair(**p) for p in raw["pairs"])
        raw["studies"] = tuple(raw.get("studies", ()))
        found.append(Calibration(**raw))
    if environment is None:
        return found
    machine = json.loads(json.dumps(comparable_metadata(environment)))
    return [c for c in found if c.machine == machine]


def cited(found: list[Calibration], capacity: bool = False) -> str:
    """What the report says beside a claim: how often identical servers were called apart here
    ("" when no calibration of this machine is stored)."""
    if capacity:
        n, k = sum(c.capacity_pairs for c in found), sum(c.above for c in found)
    else:
        n, k = sum(c.tested for c in found), sum(c.ahead for c in found)
    if not n:
        return ""
    servers = ", ".join(sorted({c.server for c in found}))
    what = "capacities" if capacity else "servers"
    return (
        f"identical {what} were called apart in {k} of {n} pairs here ({servers} against "
        f"itself, wsgibench calibrate; nominal {found[0].alpha:.0%})"
    )
