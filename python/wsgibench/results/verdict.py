"""A cell's status, and what judging one repeat decides (`Verdict`): judging returns it, the cell
applies it, diagnosis reads it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# How a repeat the engine limited is said (run/judge.py), before its reasons; and the harness's
# reason, said last, when other work held the engine's CPUs (results/capacity_step.py reads both).
BOTTLENECK = "load generator was the bottleneck: "
STARVED = "engine starved: "
# How a repeat whose load hosts started too far apart is said (a condition of the hosts' machines).
SKEW = "load hosts started "


class CellStatus(StrEnum):
    """What a cell came to; the values are the strings the store and every export hold."""

    MEASURED = "measured"  # the number is the server's
    INVALID = "invalid"  # the harness limited it (engine saturated or starved, hosts apart)
    DISQUALIFIED = "disqualified"  # the server crashed, stopped answering or failed too much
    UNAVAILABLE = "unavailable"  # the server cannot take the cell (app, binaries, workers)
    FAILED = "failed"  # the engine failed


@dataclass(frozen=True)
class Verdict:
    """What one repeat says of its cell: measured, invalid or disqualified (which ends the cell),
    and why; whether the engine limited it, and the reasons judging found for that."""

    status: CellStatus = CellStatus.MEASURED
    reason: str | None = None
    saturated: bool = False  # the engine's own flag, or other work starved it of its CPUs
    # None when judging stopped before looking (a disqualified repeat): the store then keeps none
    saturation_reasons: tuple[str, ...] | None = None

    @property
    def ends_cell(self) -> bool:
        """Disqualified, or unavailable (the server lacks what the load needs, e.g. WebSocket)."""
        return self.status in (CellStatus.DISQUALIFIED, CellStatus.UNAVAILABLE)
