"""Two runs compared per request kind, for the cells matched in both whose load has several
kinds (a mix of [[requests]], a replayed log): each kind's valid replies per second and p99, A's
repeats against B's, tested as a cell's headline figures are (results/significance.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wsgibench.results.engine_result import EngineResult
from wsgibench.results.kind_figures import kind_names, several_kinds
from wsgibench.results.significance import Verdict, compare_samples
from wsgibench.results.store import Store


@dataclass(frozen=True)
class KindChange:
    server: str
    load: str
    level: float
    kind: str
    rps: Verdict | None  # the kind's valid replies per second of the window, per repeat
    p99: Verdict | None  # the kind's p99 (µs), per repeat

    @property
    def outcome(self) -> str:
        """Faster or slower by its p99 (significantly), or no change; what could not be tested."""
        v = self.p99
        if v is None:
            return "not comparable (a side has no reply of this kind)"
        if v.change is None:
            return "untested"
        if not v.testable:
            return f"untested: p99 {v.change_pct} by value"
        if v.significant and v.change:
            return "faster (p99)" if v.change < 0 else "slower (p99)"
        return "no significant change"


def _per_repeat(results: Sequence[EngineResult], kind: str) -> tuple[list[float], list[float]]:
    """The kind's valid replies a second and p99 in each repeat that has it."""
    rps, p99 = [], []
    for r in results:
        for k in r.kinds:
            if k.name != kind:
                continue
            window = r.totals.window_s or r.elapsed_s
            if window:
                rps.append(k.ok / window)
            if k.latency is not None and k.latency.count:
                p99.append(float(k.latency.p99))
    return rps, p99


def _verdict(a: list[float], b: list[float]) -> Verdict | None:
    return compare_samples(a, b) if a and b else None


def kind_changes(
    store_a: Store, store_b: Store, cells: Sequence[tuple[str, str, float, int, int]]
) -> list[KindChange]:
    """Per matched cell (server, load, level, A's cell id, B's) with several kinds on both
    sides, each kind of either side."""
    out = []
    for server, load, level, id_a, id_b in cells:
        a = [r.engine for r in store_a.stored_repeats(id_a)]
        b = [r.engine for r in store_b.stored_repeats(id_b)]
        if not (several_kinds(a) and several_kinds(b)):
            continue
        for kind in dict.fromkeys([*kind_names(a), *kind_names(b)]):
            (rps_a, p99_a), (rps_b, p99_b) = _per_repeat(a, kind), _per_repeat(b, kind)
            out.append(
                KindChange(
                    server, load, level, kind, _verdict(rps_a, rps_b), _verdict(p99_a, p99_b)
                )
            )
    return out
