"""`wsgibench run`: the study with the command line's changes (study/overrides.py), what is missing
installed, a run with a progress bar."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from rich.console import Console

from wsgibench.baseline import BASELINE
from wsgibench.cli.progress import CellProgress, planned_seconds
from wsgibench.errors import NothingMeasured
from wsgibench.machine import venvs
from wsgibench.machine.cgroups import sweep_orphans
from wsgibench.paths import default_results
from wsgibench.results.store import Cell, Store
from wsgibench.results.verdict import CellStatus
from wsgibench.run.engine import engine_version
from wsgibench.run.outcome import CellOutcome
from wsgibench.run.study import StudyRunner, refuse_bad_plans
from wsgibench.servers import get
from wsgibench.study.model import Study
from wsgibench.study.overrides import Overrides, load_with
from wsgibench.study.plan import CellPlan, plan_cells


def run_study(
    name: str,
    results: Path | None,
    changes: Overrides,
    *,
    install: bool,
    resume: bool = False,
    force: bool = False,
    report: bool = True,
    console: Console,
) -> Store:
    """Run a study with the command line's changes; a study that cannot run is refused before
    any server starts, and a run that measured nothing ends with exit 4."""
    study, _ = load_with(name, changes)
    engine_version()  # a missing or mismatched engine stops us before any server starts
    refuse_bad_plans(study)
    path = results or default_results()
    if resume and _nothing_to_resume(path, study, console):
        return Store(path, create=False, read_only=True)
    orphans = sweep_orphans()
    if orphans:
        console.print(f"[yellow]killed {len(orphans)} server process(es) left by a killed run[/]")
    if install:
        _install_missing(study, console)
    store = Store(path)
    with _sigterm_as_interrupt():
        study_id = _run(study, store, console, resume, force)
    console.print(f"results: {path}")
    if report:
        # Charts import altair (about half a second): only a run that writes a report pays it.
        from wsgibench.report import write_report

        files = write_report(Store(path, create=False, read_only=True), report_dir(path), study_id)
        console.print(f"report: {files.html}")
        if files.headline:
            console.print(f"chart: {files.headline}")
    _fail_when_nothing_measured(store, study_id)
    return store


def _nothing_to_resume(path: Path, study: Study, console: Console) -> bool:
    """--resume with no unfinished run: say so; a finished one is not run again."""
    latest = (
        Store(path, create=False, read_only=True).latest_study(study.name)
        if path.exists()
        else None
    )
    if latest is not None and latest["status"] == "finished":
        console.print(
            f"nothing to resume: study {study.name!r} (id {latest['id']}) in {path} finished; "
            "run it without --resume to measure it again"
        )
        return True
    if latest is None:
        console.print(f"no run of study {study.name!r} in {path} to resume: starting one")
    return False


def _fail_when_nothing_measured(store: Store, study_id: int) -> None:
    """Exit 4 when the study measured nothing: every cell was disqualified, unavailable or
    failed, or every server of a load (the nginx ceiling aside) was; the reasons said. A cell
    the harness limited (invalid) or other work contended has its numbers, said beside them."""
    why = nothing_measured(store.cells(study_id))
    if why:
        raise NothingMeasured(why)


# A cell of these has no number of the server's.
_NOTHING = (CellStatus.DISQUALIFIED, CellStatus.UNAVAILABLE, CellStatus.FAILED)


def nothing_measured(cells: Sequence[Cell]) -> str | None:
    """Why a run's cells measured nothing, in one line (None: something was measured)."""
    if not cells:
        return None
    if all(c.status in _NOTHING for c in cells):
        first = next((c for c in cells if c.reason), cells[0])
        return (
            f"nothing was measured: every one of the {len(cells)} cells was disqualified, "
            f"unavailable or failed (first: {first.server}: {first.status}: {first.reason})"
        )
    for load in dict.fromkeys(c.load for c in cells):
        of = [c for c in cells if c.load == load]
        servers = [c for c in of if c.server != BASELINE] or of
        if all(c.status in _NOTHING for c in servers):
            first = next((c for c in servers if c.reason), servers[0])
            return (
                f"load {load} measured nothing: every server was disqualified, unavailable or "
                f"failed (first: {first.server}: {first.status}: {first.reason})"
            )
    return None


def report_dir(results: Path) -> Path:
    """Where a run leaves its report: beside the store, named after it."""
    return results.with_name(f"{results.stem}-report")


def _install_missing(study: Study, console: Console) -> None:
    from wsgibench.cli.install import install_servers

    missing = [
        n
        for n in study.servers
        if (r := get(n)).env and not r.unavailable and venvs.installed(r.env) is None
    ]
    if missing:
        install_servers(missing, all_=False, study=None, force=False, console=console)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM unwinds like Ctrl-C, so the running server is stopped and the study marked."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(
    study: Study,
    store: Store,
    console: Console,
    resume: bool = False,
    force: bool = False,
    deadline: float | None = None,
) -> int:
    progress = CellProgress(console, study, plan_cells(study))
    progress.start()
    last = [time.monotonic()]
    try:
        runner = StudyRunner(study, store, progress=progress.step, deadline=deadline)
        for line in study.skipped:
            progress.say(f"[yellow]{study.name}[/]: {line}")
        for f in runner.doctor:
            if not f.ok:
                progress.say(
                    f"[yellow]warning[/] {f.name} is {f.value} (recommended "
                    f"{f.recommended}): {f.consequence}"
                )

        def done(cell: CellPlan, outcome: CellOutcome) -> None:
            now = time.monotonic()
            seconds, last[0] = now - last[0], now
            skipped = seconds < 0.25 * planned_seconds(study, cell)  # never started
            progress.cell_done(cell, outcome, seconds, skipped)

        study_id = runner.run(on_cell_done=done, resume=resume, force=force, on_kept=progress.kept)
    finally:
        progress.stop()
    from wsgibench.cli.show import show

    show(store, console, study_id)
    return study_id
