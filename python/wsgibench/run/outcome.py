"""What a cell comes to (`CellOutcome`, which applies each repeat's `Verdict`) and what measuring
and judging need of its running server (`ServerHandle`): shared by run/cell.py and run/judge.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import psutil

from wsgibench.results.repeat import Repeat
from wsgibench.results.verdict import CellStatus, Verdict


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
        """Keep a repeat as judged and take its verdict: a disqualification stands over anything
        before it; the first reason that made the cell invalid stays its reason."""
        self.repeats.append(rep.judged(verdict))
        if verdict.status == CellStatus.DISQUALIFIED:
            self.disqualify(verdict.reason or "")
        elif verdict.status == CellStatus.UNAVAILABLE:
            self.status, self.reason = verdict.status, verdict.reason
        elif verdict.status == CellStatus.INVALID and self.status == CellStatus.MEASURED:
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

    def dead(self) -> str | None: ...

    def logged_bytes(self) -> int: ...
