"""Two runs compared per request kind, for the cells matched in both whose load has several
kinds (a mix of [[requests]], a replayed log): each kind's valid replies per second and p99, A's
server starts against B's, tested as a cell's headline figures are (results/significance.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from wsgibench.results.kind_figures import kind_names, several_kinds
from wsgibench.results.repeat import StoredRepeat, start_of
from wsgibench.results.significance import Verdict, adjusted, compare_starts, grouped, word
from wsgibench.results.store import Store


@dataclass(frozen=True)
class KindChange:
    server: str
    load: str
    level: float
    kind: str
    rps: Verdict | None  # the kind's valid replies per second of the window, per server start
    p99: Verdict | None  # the kind's p99 (µs), per server start
    p99_adjusted: float | None = None  # its p, Benjamini–Hochberg over every kind's p99 test

    @property
    def outcome(self) -> str:
        """The p99's verdict in compare's words (results/significance.word), never from the
        point estimate: improved, regressed, change within noise, no change detected, not tested."""
        v = self.p99
        if v is None:
            return "not comparable (a side has no reply of this kind)"
        if not v.testable:
            return f"not tested: p99 {v.change_pct} by value ({v.method})"
        return f"{word(v, self.p99_adjusted, higher_is_better=False)} (p99)"


def _per_start(
    repeats: Sequence[StoredRepeat], kind: str
) -> tuple[list[list[float]], list[list[float]]]:
    """The kind's valid replies a second and p99, per server start, in each repeat that has it."""
    rps: list[tuple[int, float | None]] = []
    p99: list[tuple[int, float | None]] = []
    for rep in repeats:
        r = rep.engine
        for k in r.kinds:
            if k.name != kind:
                continue
            window = r.totals.window_s or r.elapsed_s
            ok = k.ok_in_window if k.ok_in_window is not None and r.totals.window_s else k.ok
            rps.append((start_of(rep), ok / window if window else None))
            lat = k.latency
            p99.append((start_of(rep), float(lat.p99) if lat is not None and lat.count else None))
    return grouped(rps), grouped(p99)


def _verdict(a: list[list[float]], b: list[list[float]]) -> Verdict | None:
    return compare_starts(a, b) if a and b else None


def kind_changes(
    store_a: Store, store_b: Store, cells: Sequence[tuple[str, str, float, int, int]]
) -> list[KindChange]:
    """Per matched cell (server, load, level, A's cell id, B's) with several kinds on both
    sides, each kind of either side; the p99 tests' p adjusted together (Benjamini–Hochberg)."""
    out = []
    for server, load, level, id_a, id_b in cells:
        a, b = store_a.stored_repeats(id_a), store_b.stored_repeats(id_b)
        if not (several_kinds([r.engine for r in a]) and several_kinds([r.engine for r in b])):
            continue
        names = [*kind_names([r.engine for r in a]), *kind_names([r.engine for r in b])]
        for kind in dict.fromkeys(names):
            (rps_a, p99_a), (rps_b, p99_b) = _per_start(a, kind), _per_start(b, kind)
            out.append(
                KindChange(
                    server, load, level, kind, _verdict(rps_a, rps_b), _verdict(p99_a, p99_b)
                )
            )
    tested = [i for i, c in enumerate(out) if c.p99 is not None and c.p99.p_value is not None]
    p_values = [out[i].p99.p_value or 1.0 for i in tested]  # type: ignore[union-attr]
    for i, p in zip(tested, adjusted(p_values) if p_values else [], strict=True):
        out[i] = replace(out[i], p99_adjusted=p)
    return out
