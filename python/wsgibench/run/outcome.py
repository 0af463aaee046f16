"""What a cell comes to (`CellOutcome`, which applies each repeat's `Verdict`) and what measuring
and judging need of its running server (`ServerHandle`): shared by run/cell.py and run/judge.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import psutil

from wsgibench.results import deaths
from wsgibench.results.repeat import Repeat
from wsgibench.results.verdict import SEVERITY, CellStatus, Verdict


@dataclass
class CellOutcome:
    status: CellStatus = CellStatus.MEASURED
    reason: str | None = None
    notes: list[str] = field(default_factory=list)
    capabilities: dict[str, Any] | None = None
    repeats: list[Repeat] = field(default_factory=list)  # each as judged
    diagnoses: list[dict[str, Any]] = field(default_factory=list)
    isolation: dict[str, Any] | None = None  # where and how the server ran, once it started
    # The app it served, stored with the server: name, interface, its lock's hash and packages.
    app: dict[str, Any] | None = None

    def disqualify(self, reason: str) -> None:
        self.status, self.reason = CellStatus.DISQUALIFIED, reason

    def apply(self, rep: Repeat, verdict: Verdict) -> None:
        """Keep a repeat as judged and take its verdict: a disqualification or an unavailable
        load stands over anything before it; otherwise the most severe status so far stays
        (invalid over contended over worker deaths over measured), with the first reason that
        made it so."""
        self.repeats.append(rep.judged(verdict))
        if verdict.status == CellStatus.DISQUALIFIED:
            self.disqualify(verdict.reason or "")
        elif verdict.status == CellStatus.UNAVAILABLE:
            self.status, self.reason = verdict.status, verdict.reason
        elif SEVERITY[verdict.status] > SEVERITY[self.status]:
            self.status, self.reason = verdict.status, verdict.reason

    def goes_on(self, repeats: int) -> bool:
        """Whether the cell's next server start is run: its numbers still stand so far (measured,
        or measured with a status that marks them: worker deaths, contended, invalid), with every
        one of the `repeats` planned until now run (a stop rule did not end it early)."""
        still = self.status.shown
        return still and len(self.repeats) >= repeats

    def join(self, got: CellOutcome, k: int) -> CellOutcome:
        """Start `k`'s outcome added to the cell's (run/cell.py): its repeats, a status that stands
        over the cell's (a disqualification over anything; the first invalid reason stays), its
        notes and diagnoses not said yet, the highest memory peak; else the first start's
        isolation, with the number of starts."""
        self.repeats += got.repeats
        final = got.status in (CellStatus.DISQUALIFIED, CellStatus.UNAVAILABLE)
        if final or SEVERITY[got.status] > SEVERITY[self.status]:
            self.status, self.reason = got.status, f"start {k + 1}: {got.reason}"
        self.notes += [n for n in got.notes if n not in self.notes]
        codes = {d.get("code") for d in self.diagnoses}
        self.diagnoses += [d for d in got.diagnoses if d.get("code") not in codes]
        if self.isolation is not None and got.isolation is not None:
            peaks = [i.get("memory_peak_bytes") for i in (self.isolation, got.isolation)]
            self.isolation["memory_peak_bytes"] = max((p for p in peaks if p), default=None)
            self.isolation["starts"] = k + 1
            lives = [i.get("worker_deaths") for i in (self.isolation, got.isolation)]
            if any(lives):
                self.isolation["worker_deaths"] = deaths.added(lives)
        return self


class MemoryCounter(Protocol):
    def oom_kills(self) -> int: ...


class ServerHandle(Protocol):
    """What measuring and judging need of a running server (a RunningServer, or a test's fake)."""

    host: str
    port: int

    @property
    def cgroup(self) -> MemoryCounter: ...

    def processes(self) -> list[psutil.Process]: ...

    def tree_pids(self) -> list[int]: ...

    def cpu_usage_s(self) -> float | None: ...

    def dead(self) -> str | None: ...

    def limits_changed(self) -> str | None: ...

    def logged_bytes(self) -> int: ...

    def log_marks(self) -> list[int]: ...

    def log_since(self, marks: list[int]) -> str: ...
