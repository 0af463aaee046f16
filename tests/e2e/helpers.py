"""Helpers for end-to-end tests: which servers can run here, a cell measured (or the machine said
busy), a capacity study run as users run it, and a run done again while the machine spoils it.
(Leftovers: procs.py, the processes a test itself started.)"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from wsgibench.machine import venvs as _envs
from wsgibench.results.capacity_read import read_capacities
from wsgibench.results.store import Store
from wsgibench.run.serve import availability
from wsgibench.servers import get

from .quiet import busy_said

# The installed `wsgibench` script, as users run it (not `python -m wsgibench`, not in-process):
# the end-to-end tests call the command line through it.
SCRIPT = Path(sys.executable).parent / "wsgibench"
T = TypeVar("T")


def cli(*args: str) -> list[str]:
    """The argv of a wsgibench command line, through the installed script."""
    return [str(SCRIPT), *args]


def require(name: str, install: bool = True):
    """The recipe, its env installed if need be; skip (with the reason) only when the machine lacks it."""
    recipe = get(name)
    if recipe.env and install and _envs.installed(recipe.env) is None and not recipe.unavailable:
        _envs.install(recipe.env)
    ok, why = availability(recipe)
    if not ok:
        pytest.fail(f"{name} cannot run here: {why}")
    return recipe


ENGINE_BOUND = "engine-saturated"


def expect_measured(cell, *context: object) -> None:
    """The cell (a stored `CellRow`, or a row of the cells table) was measured: one the tool
    judged contended, or whose engine other work starved, was measured too, its counts exact and
    its figures said to be the machine's (tests of figures judge those with quiet.py)."""
    if isinstance(cell, sqlite3.Row):
        status, reason = cell["status"], cell["reason"]
    else:
        status, reason = cell.status, cell.reason
    assert status == "measured" or busy_said(status, reason), (*context, status, reason)


def measured_or_engine_bound(cell) -> bool:
    """Against nginx, which answers about as fast as one engine core can ask, a cell may end
    `invalid` because the engine hit its own limit: that is the tool's honest verdict about the
    client, not a server failure; so is one the machine's other work took (quiet.busy_said).
    Nothing else may keep the cell from `measured`."""
    if busy_said(cell.status, cell.reason):
        return True
    codes = {d["code"] for d in cell.diagnoses}
    return cell.status == "measured" or (cell.status == "invalid" and ENGINE_BOUND in codes)


# What a cell says of the machine, not of the server: other work took part of its CPUs.
CONTENDED = "contended"


def server_flags(diagnoses) -> set[str]:
    """Diagnosis codes about the server: everything but the engine's own saturation and the
    machine's contention (on a shared CI machine other work now and then takes 5 % of a CPU for
    a second, which the cell says, truthfully, of the machine)."""
    return {d["code"] for d in diagnoses} - {ENGINE_BOUND, CONTENDED}


def again_while_the_machine_spoils(
    run: Callable[[Path], T], spoiled: Callable[[T], object], folder: Path, attempts: int
) -> T:
    """Run `run` into a fresh folder under `folder` (a1, a2, …) until `spoiled` finds nothing in
    its result. On a shared CI machine other work (the hypervisor's steal too) may take a CPU at
    the wrong moment, which the tool says, truthfully, of the machine; such a run is printed and
    run once more, at most `attempts` runs in all, the last returned whatever it says."""

    def fresh(attempt: int) -> Path:
        here = folder / f"a{attempt}"
        here.mkdir(exist_ok=True)
        return here

    for attempt in range(1, attempts):
        result = run(fresh(attempt))
        said = spoiled(result)
        if not said:
            return result
        print(f"attempt {attempt}: the machine, not what is tested, spoiled it ({said}); once more")
    return run(fresh(attempts))


def run_capacity_study(study: Path, folder: Path, timeout: float = 300) -> Store:
    """Run a capacity study through the installed script into a store in `folder`. A shared VM can
    starve the engine for tens of ms, or its hypervisor take the server's CPU at the knee: the
    tool then says the load generator or the machine was the limit and stops the search as
    invalid, a lower bound (tested in tests/unit), which measures the machine, not the search.
    Such a run is said and run once more in a fresh store."""

    def run(here: Path) -> Store:
        results = here / "c.sqlite"
        argv = cli("run", str(study), "--results", str(results), "--no-report")
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
        return Store(results, read_only=True)

    def limited(store: Store) -> list[str | None]:
        capacities = read_capacities(store, store.study()["id"])
        return [c.result.invalid for c in capacities if c.result.lower_bound]

    return again_while_the_machine_spoils(run, limited, folder, attempts=2)
