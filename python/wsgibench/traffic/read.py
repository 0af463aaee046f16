"""An access log read line by line (never whole): each line parsed, its target grouped into a
kind, the kind's count, statuses and sizes tallied, and its time and kind kept in compact arrays
(13 bytes a request); lines that do not parse counted, the first few kept to be shown."""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wsgibench.errors import UsageError
from wsgibench.traffic.formats import BadLine, Record, detect, reader
from wsgibench.traffic.grouping import Grouping

# Bad lines kept to show, and the most kinds tallied (the lines of kinds beyond are counted).
SHOWN_BAD = 5
MAX_TALLIED = 20_000


@dataclass
class KindTally:
    """What the log says of one kind: its requests, statuses, sizes and an example target per
    status (the first logged)."""

    method: str
    pattern: str
    count: int = 0
    statuses: dict[int | None, int] = field(default_factory=dict)
    examples: dict[int | None, str] = field(default_factory=dict)
    size_total: int = 0
    size_n: int = 0
    size_max: int = 0

    @property
    def name(self) -> str:
        return f"{self.method} {self.pattern}"

    def add(self, r: Record) -> None:
        self.count += 1
        self.statuses[r.status] = self.statuses.get(r.status, 0) + 1
        self.examples.setdefault(r.status, r.target)
        if r.size is not None:
            self.size_total += r.size
            self.size_n += 1
            self.size_max = max(self.size_max, r.size)

    @property
    def status(self) -> int | None:
        """The kind's commonest logged status (a known one before none)."""
        return max(self.statuses, key=lambda s: (self.statuses[s], s is not None))

    @property
    def example(self) -> str:
        """A logged target of the commonest status: what a replay sends for the kind."""
        return self.examples[self.status]

    @property
    def size_mean(self) -> float | None:
        return self.size_total / self.size_n if self.size_n else None


@dataclass
class BadLines:
    count: int = 0
    first: list[tuple[int, str, str]] = field(default_factory=list)  # line number, text, why

    def add(self, lineno: int, line: str, why: str) -> None:
        self.count += 1
        if len(self.first) < SHOWN_BAD:
            self.first.append((lineno, line.rstrip("\r\n")[:200], why))


@dataclass
class Reading:
    """A log as read: its format, lines, bad lines, kinds (in the order first seen), and per
    request its time (µs since the Unix epoch), whether the log gave more than its second, and
    its kind's index (-1: a kind beyond MAX_TALLIED, counted in `untallied`)."""

    path: Path
    format: str
    lines: int = 0
    bad: BadLines = field(default_factory=BadLines)
    kinds: list[KindTally] = field(default_factory=list)
    times_us: array[int] = field(default_factory=lambda: array("q"))
    precise: array[int] = field(default_factory=lambda: array("b"))
    kind_of: array[int] = field(default_factory=lambda: array("i"))
    untallied: int = 0

    @property
    def parsed(self) -> int:
        return len(self.times_us)


def read_log(
    path: Path, fmt: str | None, grouping: Grouping, json_fields: Mapping[str, str] | None = None
) -> Reading:
    """Read `path` in the format `fmt` (None: detected from its first lines; JSON lines' fields
    named in `json_fields`); UsageError when it cannot be opened or not one line parses."""
    try:
        f = path.open(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"access log {path}: {exc.strerror or exc}") from None
    with f:
        if fmt is None:
            head = list(itertools.islice(f, 50))
            fmt = detect(head)
            f.seek(0)
        reading = Reading(path, fmt)
        _read_lines(reading, f, reader(fmt, json_fields), grouping)
    if not reading.parsed:
        first = reading.bad.first[0] if reading.bad.first else None
        said = f" (line {first[0]}: {first[2]})" if first else ""
        raise UsageError(
            f"access log {path}: none of its {reading.lines:,} lines reads as {fmt}{said}"
        )
    return reading


def _read_lines(
    reading: Reading, lines: Iterable[str], parse: Callable[[str], Record], grouping: Grouping
) -> None:
    index: dict[str, int] = {}
    kinds, bad = reading.kinds, reading.bad
    times, precise, kind_of = reading.times_us, reading.precise, reading.kind_of
    lineno = 0
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            r = parse(line)
        except BadLine as exc:
            bad.add(lineno, line, str(exc))
            continue
        key = f"{r.method} {grouping.group(r.target)}"
        k = index.get(key)
        if k is None:
            if len(kinds) >= MAX_TALLIED:
                k = -1
            else:
                k = index[key] = len(kinds)
                kinds.append(KindTally(r.method, key.split(" ", 1)[1]))
        if k >= 0:
            kinds[k].add(r)
        else:
            reading.untallied += 1
        times.append(round(r.time_s * 1e6))
        precise.append(r.precise)
        kind_of.append(k)
    reading.lines = lineno
