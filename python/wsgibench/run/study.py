"""Run a study: every planned cell in order (one cell's life is run/cell.py), resumable, stored."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from itertools import groupby
from typing import Any

from wsgibench import databases
from wsgibench.errors import UsageError
from wsgibench.machine import calm, doctor, environment, topology
from wsgibench.machine.process import RunningServer
from wsgibench.results.capacity import CALM_NOTE
from wsgibench.results.compare import metadata_differences
from wsgibench.results.engine_plan import LEVEL_FIELDS
from wsgibench.results.store import Cell, Store
from wsgibench.results.verdict import CellStatus
from wsgibench.run import appcheck, replycheck
from wsgibench.run.appcheck import PreparedApps
from wsgibench.run.capacity import Measured, NoteOf, RunCell, search_servers, servers_in_order
from wsgibench.run.cell import HOST_LOST, CellContext, database_kind, save_cell
from wsgibench.run.cluster import ClusterEngine, LoadHosts, check_target
from wsgibench.run.engine import Engine, EngineProcess, check_plans, engine_version
from wsgibench.run.outcome import CellOutcome
from wsgibench.run.placement import engine_threads_note
from wsgibench.run.turns import CellRun, run_cell, take_turns
from wsgibench.servers import binary_versions
from wsgibench.study.model import Study
from wsgibench.study.plan import CellPlan, every_plan, plan_cells

Progress = Callable[[str], None]
CellDone = Callable[[CellPlan, CellOutcome], None]
Kept = Callable[[set[tuple[str, str, float]]], None]
# A server disqualified or unavailable at a level is not run at the load's higher levels.
LEAVE_THE_SWEEP = (CellStatus.DISQUALIFIED, CellStatus.UNAVAILABLE)


def refuse_bad_plans(study: Study) -> None:
    """Every plan the study will give the engine, checked by the engine itself before anything
    starts: a plan it would refuse ends the run with one line naming the load and the level."""
    plans = every_plan(study)
    for index, why in check_plans([plan for _, plan in plans])[:1]:
        raise UsageError(
            f"study {study.name}: {plans[index][0]}: the engine refuses the plan: {why}"
        )


class StudyRunner:
    def __init__(
        self,
        study: Study,
        store: Store,
        progress: Progress | None = None,
        engine: Engine | None = None,
        check_replies: bool = True,
        deadline: float | None = None,
    ):
        self.study = study
        self.store = store
        self.progress: Progress = progress or (lambda _msg: None)
        self.engine: Engine = engine or EngineProcess()
        self.load_hosts: LoadHosts | None = None  # started by run() when the study names them
        self._given_engine = engine is not None
        # Before the first cell, each request kind sent once and judged (run/replycheck.py).
        self.check_replies = check_replies
        # No load starts after this (time.monotonic()): `tune --time` bounds its every round.
        self.deadline = deadline
        self.topology = topology.read()
        self.layout = (
            topology.scaled_layout(self.topology, study.server_cpu_count)
            if study.server_cpu_count and study.server_cpus is None
            else topology.layout(self.topology, study.server_cpus, study.engine_cpus)
        )
        self.server_cpus, self.engine_cpus = self.layout.server_cpus, self.layout.engine_cpus
        self.cpus = sorted(set(self.server_cpus + self.engine_cpus))  # every CPU the study uses
        self.current_server: RunningServer | None = None  # the server of the cell in progress
        self.doctor = doctor.findings(self.cpus)
        # The db app's database: files next to the results store, one per load (see databases).
        self.databases = databases.LoadDatabase(store.path.resolve().parent)
        self.apps = PreparedApps()
        # How a step the machine limited waits for calm CPUs before it is run again.
        self.wait_for_calm: Callable[[list[int]], calm.Calm] = calm.wait_until_calm

    def run(
        self,
        on_cell_done: CellDone | None = None,
        resume: bool = False,
        force: bool = False,
        on_kept: Kept | None = None,
    ) -> int:
        """Run every cell not stored yet; with resume, continue the store's unfinished run (on the
        same machine and engine, unless forced)."""
        self._check_engine_threads()
        databases.preflight(
            {k for load in self.study.loads if (k := database_kind(self.study, load))}
        )
        # One's own app imported once, its dependencies installed: a broken one stops here.
        self.apps = appcheck.prepare(self.study, self.progress)
        if self.check_replies:  # on this machine's own engine, whatever sends the load
            ctx = replace(self._cell_context(), engine=EngineProcess())
            replycheck.check_replies(ctx, self.progress)
        try:
            self._connect_load_hosts()
            return self._run(on_cell_done, resume, force, on_kept)
        finally:
            if self.load_hosts is not None:
                self.load_hosts.close()
                self.load_hosts = None

    def _check_engine_threads(self) -> None:
        """More engine threads than engine CPUs stop the study before any cell (unless it allows
        them): in its layout, and in each scaling load's."""
        engine_threads_note(self.study, self.engine_cpus)
        for load in self.study.loads:
            if load.cpus is not None:
                engine_threads_note(
                    self.study, topology.scaled_layout(self.topology, load.cpus).engine_cpus
                )

    def _connect_load_hosts(self) -> None:
        """The study's load hosts, checked, and the engine that spreads each cell over them."""
        spec = self.study.load_hosts
        if spec is None or self._given_engine:
            return
        self.progress("load hosts: connecting and checking")
        self.load_hosts = LoadHosts(spec.cluster, spec.local_workers)
        hosts = self.load_hosts.preflight()
        check_target(hosts, self.study.server_host)
        self.engine = ClusterEngine(self.load_hosts, spec.skew_bound_s)

    def _run(
        self, on_cell_done: CellDone | None, resume: bool, force: bool, on_kept: Kept | None
    ) -> int:
        study_id = self._begin(resume, force)
        done = {(c.server, c.load, c.level): c for c in self.store.cells(study_id)}
        # A cell a lost load host made invalid is run again by --resume.
        for key in [k for k, c in done.items() if HOST_LOST in c.notes]:
            self.store.delete_cell(done.pop(key).id)
        if done and on_kept:
            on_kept(set(done))
        out_of = _left_the_sweep(done.values())
        status, lost = "interrupted", [0]
        cells = plan_cells(self.study)
        position = len(cells)  # a capacity load's steps come after every planned cell
        try:
            for load in self.study.loads:
                if self.deadline is not None and time.monotonic() >= self.deadline:
                    self.progress(f"{load.name}: not run: the time is up")
                    lost[0] += 1  # the study is incomplete: --resume runs the rest
                    continue
                if self.databases.load not in (None, load.name):
                    self.databases.stop()  # after the load's last cell (a load's cells are contiguous)
                if load.capacity is not None:
                    run = self._capacity_cell(study_id, done, on_cell_done, lost)
                    servers = servers_in_order(load, self.study)
                    _, position = search_servers(load, servers, self.study, run, position)
                    continue
                for level in _levels(c for c in cells if c.load.name == load.name):
                    todo = [c for c in level if c.key not in done]
                    self._run_level(study_id, todo, out_of, on_cell_done, lost)
            # cells (capacity steps too) lost with a load host are left for --resume
            status = "incomplete" if lost[0] else "finished"
        finally:
            self.databases.stop()
            self.store.finish_study(study_id, status)
        return study_id

    def _run_level(
        self,
        study_id: int,
        cells: list[CellPlan],
        out_of: dict[tuple[str, str], tuple[CellStatus, str]],
        on_cell_done: CellDone | None,
        lost: list[int],
    ) -> None:
        """A level's cells, their server starts taken in turn; each stored as soon as its last
        start is done (a server that leaves the sweep here is out of the load's higher levels)."""
        for turn in take_turns([self._run_of(c, out_of) for c in cells]):
            cell, outcome = turn.cell, turn.finish()
            if outcome.status in LEAVE_THE_SWEEP:
                out_of.setdefault((cell.server, cell.load.name), _leaves_cell(cell, outcome))
            save_cell(self.store, study_id, cell, outcome, turn.started)
            lost[0] += HOST_LOST in outcome.notes
            if on_cell_done:
                on_cell_done(cell, outcome)

    def _capacity_cell(
        self,
        study_id: int,
        done: dict[tuple[str, str, float], Cell],
        on_cell_done: CellDone | None,
        lost: list[int],
    ) -> RunCell:
        """Run one step of a capacity search (or read it back when a resumed run stored it); a
        step lost with a load host counts in `lost` (the study is then incomplete)."""

        def run(cell: CellPlan, note_of: NoteOf) -> Measured:
            stored = done.get(cell.key)
            if stored is not None and stored.id != cell.replaces:
                reps = self.store.stored_repeats(stored.id)
                return Measured(stored.status, stored.reason, reps, stored.id)
            # a step run again waits until the machine's CPUs are calm, not to meet the same moment
            quiet = self.wait_for_calm(self.cpus) if cell.replaces is not None else None
            started = time.time()
            outcome = run_cell(cell, self._cell_context())
            outcome.notes.extend(note_of(outcome.status, outcome.reason, outcome.repeats))
            if quiet is not None:
                outcome.notes.append(f"{CALM_NOTE}: {quiet.describe()}")
            if cell.replaces is not None:  # a step run again: one cell a rate, the notes say so
                self.store.delete_cell(cell.replaces)
            cell_id = save_cell(self.store, study_id, cell, outcome, started)
            lost[0] += HOST_LOST in outcome.notes
            if on_cell_done:
                on_cell_done(cell, outcome)
            return Measured(outcome.status, outcome.reason, outcome.repeats, cell_id)

        return run

    def _begin(self, resume: bool, force: bool) -> int:
        # the starts as run, also when the study's default: a store from before has none (one)
        as_run = {"starts": self.study.starts, **self.study.raw, "name": self.study.name}
        if self.study.changes:
            as_run["command_line"] = list(self.study.changes)
        config = json.loads(json.dumps(as_run, default=str))
        study_id = self.store.unfinished_study(self.study.name, config) if resume else None
        here = self._environment()
        if study_id is None:
            return self.store.begin_study(self.study.name, config, here)
        before = json.loads(self.store.study(study_id)["environment_json"])
        differences = metadata_differences(before, here)
        if differences and not force:
            raise UsageError(
                f"cannot resume study {self.study.name!r} (id {study_id}): it ran on another "
                f"machine or engine ({'; '.join(differences)}); its cells would not be comparable "
                "(--force resumes anyway)"
            )
        self.store.mark_study(study_id, "running")
        return study_id

    def _run_of(
        self, cell: CellPlan, out_of: dict[tuple[str, str], tuple[CellStatus, str]]
    ) -> CellRun:
        """The cell's starts to run, or its outcome when its server already left the sweep."""
        left = out_of.get((cell.server, cell.load.name))
        return CellRun(cell, self._cell_context(), CellOutcome(*left) if left else None)

    def _cell_context(self) -> CellContext:
        def on_server(server: RunningServer | None) -> None:
            self.current_server = server

        return CellContext(
            self.study,
            self.engine,
            self.databases,
            self.layout,
            self.topology,
            progress=lambda msg: self.progress(msg),
            on_server=on_server,
            apps=self.apps,
        )

    def _environment(self) -> dict[str, Any]:
        # The system binaries' versions (nginx_version, apache_version), each asked of the
        # recipes of the study that need it.
        found = environment.collect(**binary_versions(self.study.servers))
        found["engine"] = engine_version()
        found["server_cpus"], found["engine_cpus"] = self.server_cpus, self.engine_cpus
        found["topology"], found["layout"] = self.topology.as_dict(), self.layout.as_dict()
        found["doctor"] = [f.as_dict() for f in self.doctor]
        if self.load_hosts is not None:
            assert self.study.load_hosts is not None
            found["load_hosts"] = {
                **self.study.load_hosts.as_dict(),
                "hosts": [h.as_dict() for h in self.load_hosts.hosts],
            }
        return found


def _left_the_sweep(cells: Any) -> dict[tuple[str, str], tuple[CellStatus, str]]:
    """(server, load) -> (status, why) for servers that left a load's sweep in a stored run."""
    out_of: dict[tuple[str, str], tuple[CellStatus, str]] = {}
    for c in sorted(cells, key=lambda c: c.position):
        assert isinstance(c, Cell)
        if c.status in LEAVE_THE_SWEEP:
            out_of.setdefault((c.server, c.load), _leaves(c.status, c.reason, c.level, c.model))
    return out_of


def _levels(cells: Iterable[CellPlan]) -> list[list[CellPlan]]:
    """A load's planned cells (in order) grouped by level: the cells that take turns."""
    return [list(group) for _, group in groupby(cells, key=lambda c: c.level)]


def _leaves_cell(cell: CellPlan, outcome: CellOutcome) -> tuple[CellStatus, str]:
    return _leaves(outcome.status, outcome.reason, cell.level, cell.load.model)


def _leaves(
    status: CellStatus, reason: str | None, level: float, model: str
) -> tuple[CellStatus, str]:
    """What the later levels of a server that left the sweep record."""
    if status == CellStatus.UNAVAILABLE or (reason or "").startswith("disqualified at"):
        return status, reason or ""
    return status, f"disqualified at {LEVEL_FIELDS[model]} {level:g}: {reason}"
