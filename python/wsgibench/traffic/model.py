"""The traffic model of a log read: the kinds replayed (with their shares, logged statuses and
sizes), what was left out and why, and the requests' offsets (µs from the log's first second),
second by second; a request logged to the second only is placed evenly within it."""

from __future__ import annotations

import statistics
from array import array
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from wsgibench.traffic.read import MAX_TALLIED, BadLines, KindTally, Reading

# Methods whose requests carry a body the log does not hold, and methods never replayed.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
NOT_REPLAYED = frozenset({"CONNECT"})
DEFAULT_MAX_KINDS = 50
US = 1_000_000


@dataclass(frozen=True)
class Kind:
    """A kind replayed: its name ("GET /items/{id}"), what is sent (`example`, the first target
    logged with its commonest status), its requests and share, its logged statuses (the
    commonest is the expected one unless the study says otherwise) and response sizes."""

    name: str
    method: str
    pattern: str
    example: str
    count: int
    share: float
    status: int | None
    statuses: dict[int | None, int]
    size_mean: float | None
    size_max: int | None


@dataclass(frozen=True)
class LeftOut:
    """Requests of the log the replay leaves out: which, how many, why."""

    what: str
    requests: int
    why: str


@dataclass(frozen=True)
class Rate:
    """Requests per second over the log's seconds: the mean, the peak and its second, the peak
    over the mean (burstiness) and the coefficient of variation of the seconds."""

    mean: float
    peak: int
    peak_at: int
    burstiness: float
    cv: float


@dataclass
class TrafficModel:
    path: Path
    format: str
    lines: int
    parsed: int
    bad: BadLines
    kinds: tuple[Kind, ...]
    left_out: tuple[LeftOut, ...]
    start_s: int  # the Unix second the log's first request is in: offset 0
    offsets_us: array[int]  # each request replayed, ascending
    kind_of: array[int]  # its kind, an index into `kinds`
    per_second: list[int]  # requests replayed in each second of the log

    @property
    def requests(self) -> int:
        return len(self.offsets_us)

    @property
    def span_s(self) -> int:
        """The log's span in whole seconds: every offset is below it."""
        return len(self.per_second)

    @property
    def mean_rps(self) -> float:
        """Requests a second over the span: a speed of 1 offers this many on average."""
        return self.requests / self.span_s if self.span_s else 0.0

    def rate(self) -> Rate:
        seconds = self.per_second or [0]
        mean = sum(seconds) / len(seconds)
        peak = max(seconds)
        cv = statistics.pstdev(seconds) / mean if mean else 0.0
        return Rate(mean, peak, seconds.index(peak), peak / mean if mean else 0.0, cv)


def model_of(
    reading: Reading,
    with_bodies: Collection[str] = (),
    max_kinds: int = DEFAULT_MAX_KINDS,
) -> TrafficModel:
    """The model of a log read: a kind is replayed unless its method needs a body and none is
    named for it (`with_bodies`: kind names), it is not replayed at all, its target cannot be
    sent, or it is rarer than the `max_kinds` commonest; each such exclusion is said."""
    left: list[LeftOut] = []
    if reading.untallied:
        left.append(
            LeftOut(
                f"kinds past the first {MAX_TALLIED:,}",
                reading.untallied,
                "too many distinct kinds to tally: group their paths (group = [...])",
            )
        )
    order = sorted(range(len(reading.kinds)), key=lambda i: -reading.kinds[i].count)
    chosen: list[int] = []
    for i in order:
        tally = reading.kinds[i]
        why = _not_sent(tally, with_bodies)
        if why:
            left.append(LeftOut(tally.name, tally.count, why))
        else:
            chosen.append(i)
    rare = chosen[max_kinds:]
    if rare:
        left.append(
            LeftOut(
                f"{len(rare):,} kinds past the {max_kinds} commonest",
                sum(reading.kinds[i].count for i in rare),
                "rarer than those kept (max_kinds, or group their paths)",
            )
        )
    chosen = chosen[:max_kinds]
    kept = sum(reading.kinds[i].count for i in chosen)
    kinds = tuple(_kind(reading.kinds[i], kept) for i in chosen)
    remap = array("i", [-1] * len(reading.kinds))
    for new, old in enumerate(chosen):
        remap[old] = new
    start_s, offsets, kind_of = _schedule(reading, remap)
    per_second = [0] * (offsets[-1] // US + 1 if offsets else 0)
    for o in offsets:
        per_second[o // US] += 1
    return TrafficModel(
        reading.path,
        reading.format,
        reading.lines,
        reading.parsed,
        reading.bad,
        kinds,
        tuple(left),
        start_s,
        offsets,
        kind_of,
        per_second,
    )


def _not_sent(tally: KindTally, with_bodies: Collection[str]) -> str:
    """Why a kind is left out, or ""."""
    if tally.method in NOT_REPLAYED:
        return f"{tally.method} is not replayed"
    if tally.method in BODY_METHODS and tally.name not in with_bodies:
        return (
            f"a {tally.method} needs its body, which the log does not hold: name a file in bodies"
        )
    if any(c <= " " or c == "\x7f" for c in tally.example):
        return "its target holds spaces or control characters"
    return ""


def _kind(tally: KindTally, total: int) -> Kind:
    return Kind(
        tally.name,
        tally.method,
        tally.pattern,
        tally.example,
        tally.count,
        tally.count / total if total else 0.0,
        tally.status,
        dict(tally.statuses),
        tally.size_mean,
        tally.size_max if tally.size_n else None,
    )


def _schedule(reading: Reading, remap: array[int]) -> tuple[int, array[int], array[int]]:
    """The kept requests' offsets from the first one's second (µs, ascending; those logged to
    the second spread evenly within it, in the log's order) and their kinds."""
    times, kinds, coarse = array("q"), array("H"), array("b")
    for t, p, k in zip(reading.times_us, reading.precise, reading.kind_of, strict=True):
        new = remap[k] if k >= 0 else -1
        if new >= 0:
            times.append(t)
            kinds.append(new)
            coarse.append(not p)
    if not times:
        return 0, times, kinds
    start_s = min(times) // US
    _spread(times, coarse)
    base = start_s * US
    for i in range(len(times)):
        times[i] -= base
    if any(times[i] > times[i + 1] for i in range(len(times) - 1)):
        order = sorted(range(len(times)), key=times.__getitem__)
        times = array("q", (times[i] for i in order))
        kinds = array("H", (kinds[i] for i in order))
    return start_s, times, kinds


def _spread(times: array[int], coarse: array[int]) -> None:
    """Requests logged to the second: the i-th of n in a second at (2i + 1) / 2n of it."""
    if not any(coarse):
        return
    count: dict[int, int] = {}
    for t, c in zip(times, coarse, strict=True):
        if c:
            s = t // US
            count[s] = count.get(s, 0) + 1
    seen: dict[int, int] = {}
    for j, c in enumerate(coarse):
        if c:
            s = times[j] // US
            i = seen.get(s, 0)
            seen[s] = i + 1
            times[j] = s * US + (2 * i + 1) * US // (2 * count[s])
