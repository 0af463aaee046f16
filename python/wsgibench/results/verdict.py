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
# How a repeat whose CPUs other work took is said, before the repeat and what took them.
CONTENDED = "other work on the CPUs in "


class CellStatus(StrEnum):
    """What a cell came to; the values are the strings the store and every export hold. Only
    `measured` is a clean measurement: ranked, crowned, compared, fed to history and capacity."""

    MEASURED = "measured"  # the number is the server's
    # measured, but processes of the server died (or were killed) during it: the server's own
    # behaviour, shown with how many died and how, never a clean number
    DEATHS = "worker-deaths"
    # other work took the server's or the engine's CPUs (or the hypervisor did): the number is
    # the machine's as much as the server's
    CONTENDED = "contended"
    INVALID = "invalid"  # the harness limited it (engine saturated or starved, hosts apart)
    DISQUALIFIED = "disqualified"  # the server crashed, stopped answering or failed too much
    UNAVAILABLE = "unavailable"  # the server cannot take the cell (app, binaries, workers)
    FAILED = "failed"  # the engine failed

    @property
    def counts(self) -> bool:
        """Whether the number may be ranked, crowned, compared or fed to history and capacity."""
        return self is CellStatus.MEASURED

    @property
    def shown(self) -> bool:
        """Whether the cell has numbers to show (with its reason when it is not clean)."""
        return self in (
            CellStatus.MEASURED,
            CellStatus.DEATHS,
            CellStatus.CONTENDED,
            CellStatus.INVALID,
        )


# The order in which a repeat's status stands over an earlier one's in its cell: a later repeat
# never makes a cell cleaner than an earlier one did.
SEVERITY = {
    CellStatus.MEASURED: 0,
    CellStatus.DEATHS: 1,
    CellStatus.CONTENDED: 2,
    CellStatus.INVALID: 3,
    CellStatus.FAILED: 4,
    CellStatus.UNAVAILABLE: 5,
    CellStatus.DISQUALIFIED: 6,
}


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
