"""`wsgibench run`: apply command-line overrides, install what is missing, run with a progress bar."""

from __future__ import annotations

import contextlib
import signal
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from wsgibench.cli.progress import CellProgress, planned_seconds
from wsgibench.errors import UsageError
from wsgibench.machine import venvs
from wsgibench.machine.cgroups import sweep_orphans
from wsgibench.machine.topology import parse_cpulist
from wsgibench.paths import default_results
from wsgibench.report import write_report
from wsgibench.results.store import Store
from wsgibench.run.cell import CellOutcome
from wsgibench.run.engine import engine_version
from wsgibench.run.study import StudyRunner
from wsgibench.servers import get
from wsgibench.study.model import Study, load_study, study_path
from wsgibench.study.plan import CellPlan, plan_cells


def split_list(value: str, cast) -> list:
    try:
        return [cast(v.strip()) for v in value.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"cannot read {value!r} as a comma-separated list of numbers") from None


def full_size(raw: dict[str, Any], name: str) -> dict[str, Any]:
    """The study as its seed ran it at full size: [full] replaces top-level keys, and
    [full.load.NAME] the keys of that load."""
    full = raw.get("full")
    if not isinstance(full, dict):
        raise UsageError(f"{name} has no [full] size: it already runs as its seed did")
    loads = full.get("load", {})
    merged = {**raw, **{k: v for k, v in full.items() if k != "load"}}
    merged["load"] = [{**load, **loads.get(load.get("name"), {})} for load in raw.get("load", [])]
    return merged


def overrides(
    study_name: str,
    servers: str | None,
    repeats: int | None,
    duration: float | None,
    levels: str | None,
    app_env: tuple[str, ...] = (),
    cpus: dict[str, str | None] | None = None,
    full: bool = False,
    hosts: dict[str, Any] | None = None,
) -> dict[str, Any]:
    import tomllib

    raw = tomllib.loads(study_path(study_name).read_text()) if study_name else {}
    out: dict[str, Any] = {}
    if full:  # the seed's own size: the study's [full] table, loads matched by name
        raw = full_size(raw, study_name)
        out.update({k: v for k, v in raw.items() if k != "full"})
    for key, value in (cpus or {}).items():  # --server-cpus 0-3, --engine-cpus 4-7
        if value:
            try:
                out[key] = parse_cpulist(value)
            except ValueError:
                raise UsageError(f"cannot read {value!r} as CPUs (e.g. 0-3,8)") from None
    given = {k: v for k, v in (hosts or {}).items() if v is not None}
    if (
        "cluster" in given or "load_hosts" in given
    ):  # the command line's choice replaces the study's
        out.update({"cluster": None, "load_hosts": None})
    out.update(given)
    if servers:
        out["servers"] = split_list(servers, str)
    if app_env:
        pairs = [item.partition("=") for item in app_env]
        bad = [k for k, sep, _ in pairs if not sep or not k]
        if bad:
            raise UsageError(f"--app-env takes KEY=VALUE, not {bad[0]!r}")
        out["app_env"] = {**raw.get("app_env", {}), **{k: v for k, _, v in pairs}}
    if repeats is not None:
        out["repeats"] = repeats
        out["trim"] = min(int(raw.get("trim", 0)), max(0, (repeats - 1) // 2))
    if duration is not None or levels:
        loads = []
        for load in raw.get("load", []):
            load = dict(load)
            if duration is not None:
                if duration <= 0:
                    raise UsageError("--duration must be positive")
                if "duration_s" in load:
                    load["duration_s"] = duration
            if levels:
                load["levels"] = split_list(levels, float)
            loads.append(load)
        out["load"] = loads
    return out


def run_study(
    name: str,
    results: Path | None,
    *,
    servers: str | None,
    repeats: int | None,
    app_env: tuple[str, ...] = (),
    duration: float | None,
    levels: str | None,
    install: bool,
    resume: bool = False,
    force: bool = False,
    cpus: dict[str, str | None] | None = None,
    hosts: dict[str, Any] | None = None,
    report: bool = True,
    full: bool = False,
    console: Console,
) -> Store:
    try:
        study = load_study(
            name,
            overrides(name, servers, repeats, duration, levels, app_env, cpus or {}, full, hosts),
        )
    except Exception as exc:
        import tomllib

        if isinstance(exc, tomllib.TOMLDecodeError):
            raise UsageError(f"{name}: malformed TOML: {exc}") from None
        raise
    engine_version()  # a missing or mismatched engine stops us before any server starts
    orphans = sweep_orphans()
    if orphans:
        console.print(f"[yellow]killed {len(orphans)} server process(es) left by a killed run[/]")
    if install:
        _install_missing(study, console)
    path = results or default_results()
    store = Store(path)
    with _sigterm_as_interrupt():
        study_id = _run(study, store, console, resume, force)
    console.print(f"results: {path}")
    if report:
        files = write_report(Store(path, create=False, read_only=True), report_dir(path), study_id)
        console.print(f"report: {files.html}")
        if files.headline:
            console.print(f"chart: {files.headline}")
    return store


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
def _sigterm_as_interrupt():
    """SIGTERM unwinds like Ctrl-C, so the running server is stopped and the study marked."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(
    study: Study, store: Store, console: Console, resume: bool = False, force: bool = False
) -> int:
    progress = CellProgress(console, study, plan_cells(study))
    progress.start()
    last = [time.monotonic()]
    try:
        runner = StudyRunner(study, store, progress=progress.step)
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

        study_id = runner.run(on_cell_done=done, resume=resume, force=force)
    finally:
        progress.stop()
    from wsgibench.cli.show import show

    show(store, console, study_id)
    return study_id
