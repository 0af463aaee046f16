"""Bring one catalog entry up on free ports with the study's isolation, for a cell or a check."""

from __future__ import annotations

import math
import os
import platform
import shutil
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wsgibench.errors import EnvironmentProblem, StartupError
from wsgibench.machine import locks, scratch, venvs
from wsgibench.machine.process import Command, Readiness, RunningServer, free_port, launch
from wsgibench.run import checks, tls
from wsgibench.servers import LaunchContext, ServerRecipe, versions
from wsgibench.servers.recipe import Interface
from wsgibench.study.apps import APPS, AppSpec
from wsgibench.study.factory import is_call, write_shim

PORT_ATTEMPTS = 3


@dataclass(frozen=True)
class ServeOptions:
    workers: int = 1
    threads: int = 1
    exact_threads: bool = False  # 1 means one thread, not the server's default pool
    runtime_mode: str | None = None  # one of the recipe's runtime_modes (None: its default)
    backlog: int = 2048
    # The study's app; each server gets it in its own interface.
    app: AppSpec = field(default_factory=lambda: APPS["pong"])
    # Its own dependencies for this server's Python (machine/appdeps.py), on the server's path.
    app_path: tuple[Path, ...] = ()
    cpus: list[int] | None = None
    memory_limit_bytes: int | None = None
    cpu_quota: float | None = None  # cores, through the server's cgroup (placement = "quota")
    host: str = "127.0.0.1"
    env: tuple[tuple[str, str], ...] = ()  # WSGIBENCH_* settings for the app
    access_log: bool = False
    tls: bool = False  # serve TLS with a certificate of the test CA (run/tls.py)


def availability(recipe: ServerRecipe) -> tuple[bool, str]:
    """(usable now, reason when not)."""
    if recipe.unavailable:
        return False, recipe.unavailable
    missing = recipe.missing_binaries()
    if missing:
        pkgs = " ".join(recipe.system_packages) or " ".join(missing)
        return False, f"needs {', '.join(missing)}: apt-get install {pkgs}"
    if recipe.env and venvs.installed(recipe.env) is None:
        failed = venvs.failed_build(recipe.env)
        if failed:
            return False, f"did not build here: {failed}"
        return False, f"not installed: wsgibench install {recipe.name}"
    return True, ""


def installed_version(recipe: ServerRecipe) -> str | None:
    if recipe.stdlib_python:
        return f"python {platform.python_version()}"
    if recipe.env is None:
        return recipe.version() if recipe.version else None
    env = venvs.installed(recipe.env)
    if env is None:
        return None
    if recipe.version_of is None:  # a standard-library server: its version is Python's
        return f"python {venvs.python_version(env)}"
    return env.version(recipe.version_of)


def server_python(recipe: ServerRecipe) -> Path | None:
    """The interpreter the server runs on: its venv's, wsgibench's own, or none (nginx)."""
    env = venvs.installed(recipe.env) if recipe.env else None
    if env is not None:
        return env.python
    return Path(sys.executable) if recipe.stdlib_python else None


def server_info(recipe: ServerRecipe) -> dict[str, Any]:
    """What the store records of the server of a cell: its recipe, version and every package."""
    env = venvs.installed(recipe.env) if recipe.env else None
    return {
        "name": recipe.name,
        "project": recipe.project,
        "flavour": str(recipe.flavour),
        "interface": recipe.interface_label,
        "summary": recipe.summary,
        "version": installed_version(recipe),
        "requirements": list(recipe.env.requirements + recipe.env.no_deps) if recipe.env else [],
        "packages": env.packages if env else {},
        # The lock the venv was built from: two cells with one hash ran the same packages.
        "lock_sha256": locks.digest(recipe.env.lock) if recipe.env else None,
        "handles": list(recipe.handles),
    }


def start(recipe: ServerRecipe, options: ServeOptions) -> tuple[RunningServer, Path]:
    """Start the server; returns it and its scratch dir (the caller removes the dir after stop)."""
    ok, why = availability(recipe)
    if not ok:
        raise EnvironmentProblem(f"{recipe.name}: {why}")
    last: StartupError | None = None
    scratch.sweep_once()  # what a killed run left behind
    for _ in range(PORT_ATTEMPTS):
        workdir = scratch.make(recipe.name)
        try:
            return _start_once(recipe, options, workdir), workdir
        except StartupError as exc:
            shutil.rmtree(workdir, ignore_errors=True)
            last = exc
            if "in use" not in str(exc).lower():
                raise
    assert last is not None
    raise StartupError(f"{last} (tried {PORT_ATTEMPTS} fresh ports)")


# What a copy of one's own app leaves out: version control, caches, virtual environments.
_NOT_COPIED = shutil.ignore_patterns(
    "__pycache__", ".git", ".hg", ".venv", "venv", ".tox", "node_modules", "*.pyc"
)
# The most a copy of one's own app's folder may hold: it is copied for every server start.
MAX_COPY_BYTES = 1 << 30


def copy_size_over(folder: Path, limit: int = MAX_COPY_BYTES) -> bool:
    """Whether what a server start copies of the app's folder passes `limit` bytes; the walk stops
    as soon as it does (a home directory is not walked to its end)."""
    total = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in _NOT_COPIED(root, dirs)]
        for name in set(files) - _NOT_COPIED(root, files):
            try:
                total += (Path(root) / name).lstat().st_size
            except OSError:
                continue
            if total > limit:
                return True
    return False


def _start_once(recipe: ServerRecipe, options: ServeOptions, workdir: Path) -> RunningServer:
    workdir.chmod(0o755)  # servers that drop privileges (Apache children) must read it
    # A private copy of the app's folder: readable by those users wherever it lives.
    app = options.app
    app_dir = Path(shutil.copytree(app.folder, workdir / "apps", ignore=_NOT_COPIED))
    module = app.module_for(recipe.interface, recipe.native_api) or app.name
    callable_ = app.callable_for(recipe.interface)
    if is_call(callable_):  # a factory: every server imports the app it returns from one module
        module, callable_ = write_shim(app_dir, module, callable_), "app"
    host = options.host
    ctx = LaunchContext(
        host=host,
        port=free_port(host),
        internal_port=free_port(host),
        workers=options.workers,
        threads=options.threads,
        exact_threads=options.exact_threads,
        runtime_mode=options.runtime_mode,
        release=versions.split(recipe.name)[1],
        backlog=options.backlog,
        app=module,
        callable=callable_,
        app_dir=app_dir,
        app_path=options.app_path,
        chdir=app.workdir,
        workdir=workdir,
        python=server_python(recipe),
        access_log=options.access_log,
    )
    if options.tls:
        files = tls.make_files(workdir, host)
        ctx = replace(ctx, tls_cert=files.cert, tls_key=files.key)
        tls.serve(host, ctx.port, files)
    try:
        return _launch_ready(recipe, options, ctx)
    except BaseException:
        tls.forget(host, ctx.port)
        raise


def _with_tls(recipe: ServerRecipe, cmd: Command, ctx: LaunchContext) -> Command:
    """The server's command with the recipe's TLS arguments, when the cell serves TLS."""
    if ctx.tls_cert is None or cmd.role != "server" or not recipe.tls_args:
        return cmd
    fill = {"cert": str(ctx.tls_cert), "key": str(ctx.tls_key)}
    return replace(cmd, argv=[*cmd.argv, *(a.format(**fill) for a in recipe.tls_args)])


def start_allowance(options: ServeOptions) -> float:
    """Start-up time beyond the recipe's for an app slow to be ready (one's own, measured before
    the first cell: its import and ASGI lifespan start-up): twice that for each process that loads
    it on each of its CPUs (a server loads it in every worker, a few at once on few CPUs)."""
    cpus = max(1, len(options.cpus or [0]))
    return 2.0 * options.app.startup_s * math.ceil(max(1, options.workers) / cpus)


def lifespan_unrun(recipe: ServerRecipe, app: AppSpec) -> str:
    """Why one's own ASGI app may fail on this server: the lifespan start-up that the check
    before the first cell ran, and that sets up what its requests use, never runs on it."""
    if recipe.interface != Interface.ASGI or recipe.lifespan or not app.lifespan:
        return ""
    return (
        f" ({recipe.name} runs no ASGI lifespan: app {app.shown}'s lifespan start-up, which ran "
        "in the check before the first cell, never runs on it)"
    )


def _launch_ready(recipe: ServerRecipe, options: ServeOptions, ctx: LaunchContext) -> RunningServer:
    host = ctx.host
    probe = options.app.probe
    what = f"{probe.describe()} of port {ctx.port}"
    # One's own app is probed on its first GET request unless named: a wrong answer says where,
    # or that its lifespan start-up never ran on this server.
    hint = " (your app's probe: name it with --path, or probe = { path, status })"
    unrun = lifespan_unrun(recipe, options.app)  # its answer will not change: said at once
    hint = (unrun or hint) if options.app.spec else ""
    ready = Readiness(
        lambda: checks.probe(host, ctx.port, probe, hint=hint, settled=bool(unrun)),
        what,
        recipe.start_timeout_s + start_allowance(options),
    )
    assert recipe.launch is not None
    return launch(
        [_with_tls(recipe, _on_app_path(cmd, ctx), ctx) for cmd in recipe.launch(ctx)],
        host,
        ctx.port,
        ctx.workdir,
        options.cpus,
        options.memory_limit_bytes,
        ready,
        dict(options.env),
        options.cpu_quota,
    )


def _on_app_path(cmd: Command, ctx: LaunchContext) -> Command:
    """A Python server's command with the app's folder and its dependencies on its path, run in
    the app's working directory when the study names one."""
    if cmd.role != "server" or ctx.python is None:
        return cmd
    extra = tuple(p for p in (str(ctx.app_dir), *map(str, ctx.app_path)) if p not in cmd.pythonpath)
    return replace(
        cmd,
        pythonpath=(*cmd.pythonpath, *extra),
        cwd=cmd.cwd or (ctx.chdir if ctx.chdir else None),
    )
