"""Where one cell's server and engine run: their CPUs by the layout's rule and the load's placement
(pinned, shared, or under a CPU quota), the server's workers and threads, the engine's threads."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from wsgibench.errors import UsageError
from wsgibench.machine import topology
from wsgibench.machine.topology import Layout, Topology, scaled_layout
from wsgibench.servers import ServerRecipe, versions
from wsgibench.study.loads import Load
from wsgibench.study.model import Study


@dataclass(frozen=True)
class Placement:
    """Where one cell's server and engine run: their CPUs by which rule, the server's workers and
    how they were chosen, the engine's threads, and a note when the engine shares the CPUs."""

    server_cpus: list[int]
    engine_cpus: list[int]
    workers: int
    shared: str | None = None
    policy: str = "given"
    workers_rule: str = "the study's workers"
    engine_threads: int = 1
    server_threads: int = 1  # threads per worker, for the servers that take them
    # The threads were set for this load (a tuning trial): 1 means one thread, not the server's
    # own default pool.
    exact_threads: bool = False
    runtime_mode: str | None = None  # the load's runtime mode for the server (granian: st, mt)
    mode: str = "pinned"  # the load's placement: pinned, shared or quota
    cpu_quota: float | None = None  # placement quota: the cores the server's cgroup allows
    mode_note: str | None = None  # what the placement came to on this machine
    # more engine threads than engine CPUs, allowed by the study (oversubscribe_engine): said
    engine_note: str | None = None

    def notes(self) -> list[str]:
        """What a cell says of its placement: CPUs shared, the placement's mode, the engine."""
        return [n for n in (self.shared, self.mode_note, self.engine_note) if n]

    def as_dict(self) -> dict[str, Any]:
        out = {
            "server_cpus": self.server_cpus,
            "engine_cpus": self.engine_cpus,
            "policy": self.policy,
            "workers": self.workers,
            "workers_rule": self.workers_rule,
            "engine_threads": self.engine_threads,
        }
        if self.runtime_mode:
            out["runtime_mode"] = self.runtime_mode
        if self.mode != "pinned":
            out.update(placement=self.mode, placement_note=self.mode_note)
        if self.cpu_quota is not None:
            out["cpu_quota"] = self.cpu_quota
        return out


def place(
    load: Load, study: Study, recipe: ServerRecipe, layout: Layout, topo: Topology
) -> Placement:
    """The study's layout; for a scaling load (load.cpus = N) the server on N CPUs and the engine
    on the cores left (sharing them when none are, said in `shared`). Workers: the study's count
    (N for a scaling load), or with workers = "auto" the server's own convention for its CPUs;
    the nginx ceiling always gets one per server CPU. One engine thread per engine CPU."""
    if load.cpus is not None:
        layout = scaled_layout(topo, load.cpus)
    cpus = len(layout.server_cpus)
    # A server at a release (name@version) has the settings the study gives its server.
    own = study.server_settings.get(recipe.name) or study.server_settings.get(
        versions.split(recipe.name)[0], {}
    )
    if load.workers is not None or load.threads is not None:  # a tuning trial's setting
        own = {**own, **{k: v for k in ("workers", "threads") if (v := getattr(load, k))}}
    if load.workers is not None:
        workers, rule = load.workers, f"{load.workers}, the load's setting"
    elif "workers" in own:
        workers, rule = own["workers"], f"{own['workers']}, as the study's seed ran it"
    elif study.workers == "auto" or recipe.workers_follow_cpus:
        workers, rule = recipe.auto_workers(cpus)
    elif load.cpus is not None:
        workers, rule = load.cpus, f"one worker per server CPU ({load.cpus}), scaling"
    else:
        workers, rule = study.workers, "the study's workers"
    shared = None
    if layout.note and set(layout.server_cpus) & set(layout.engine_cpus):
        shared = f"{layout.note}: req/s understates the server"
    pinned = Placement(
        layout.server_cpus,
        layout.engine_cpus,
        workers,
        shared,
        layout.policy,
        rule,
        study.engine_threads or len(layout.engine_cpus),
        own.get("threads", study.threads),
        exact_threads=load.threads is not None,
        runtime_mode=load.runtime_mode if load.runtime_mode in recipe.runtime_modes else None,
    )
    placed = pinned if load.placement == "pinned" else unpinned(pinned, load, study, topo)
    return replace(placed, engine_note=engine_threads_note(study, placed.engine_cpus))


def engine_threads_note(study: Study, engine_cpus: list[int]) -> str | None:
    """More engine threads than engine CPUs: refused (UsageError) unless the study allows it,
    then the warning each cell stores; None when each thread has a CPU of its own."""
    threads = study.engine_threads
    if threads is None or threads <= len(engine_cpus):
        return None
    said = (
        f"engine_threads = {threads} on {len(engine_cpus)} engine CPU(s) {engine_cpus}: threads "
        "share a CPU, and one saturated thread hides behind the others"
    )
    if not study.oversubscribe_engine:
        raise UsageError(f"{said}; set oversubscribe_engine = true to run it anyway")
    return f"{said} (oversubscribe_engine: run anyway)"


def unpinned(pinned: Placement, load: Load, study: Study, topo: Topology) -> Placement:
    """Placement shared or quota: the server may run on every CPU the engine does not use, with
    no pinning inside, the way servers run in containers. The engine keeps the CPUs the study
    gives it, else those of the machine's default layout (half the cores on 4 or more CPUs): a
    study that narrows the server to one pinned CPU does not hand the engine the rest here. The
    workers stay the pinned placement's, so the placements differ only in the CPU allowed. Under
    a quota the server gets `cpu_quota` cores (default: as many as pinned) through its cgroup."""
    engine = study.engine_cpus or topology.layout(topo).engine_cpus
    server = [c for c in topo.cpus if c not in engine] or list(topo.cpus)
    note = f"{load.placement}: may run on CPU(s) {server}, the engine on {engine}"
    if sorted(server) == sorted(pinned.server_cpus):
        note += f"; the same {len(server)} CPU(s) as pinned on this machine"
    quota = None
    if load.placement == "quota":
        quota = load.cpu_quota or float(len(pinned.server_cpus))
        note += f"; a CPU quota of {quota:g} core(s)"
    overlap = sorted(set(server) & set(engine))
    shared = f"the engine shares CPU(s) {overlap} with the server" if overlap else None
    return replace(
        pinned,
        server_cpus=sorted(server),
        engine_cpus=sorted(engine),
        shared=shared,
        policy=load.placement,
        engine_threads=study.engine_threads or len(engine),
        mode=load.placement,
        cpu_quota=quota,
        mode_note=note,
    )
