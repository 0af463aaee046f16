"""What a cell comes to (`CellOutcome`, which applies each repeat's `Verdict`) and what measuring
and judging need of its running server (`ServerHandle`): shared by run/cell.py and run/judge.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import psutil

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
