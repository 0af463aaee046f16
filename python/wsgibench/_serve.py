"""Bring one catalog entry up on free ports with the study's isolation, for a cell or a check."""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import _envs
from ._errors import EnvironmentProblem, StartupError
from ._isolation import MemoryCgroup
from ._nginx_check import missing_binaries
from ._paths import APPS_DIR, LAUNCHERS_DIR
from ._process import RunningServer, free_port, launch
from .servers import LaunchContext, ServerRecipe

PORT_ATTEMPTS = 3


@dataclass(frozen=True)
class ServeOptions:
    workers: int = 1
    threads: int = 1
    backlog: int = 2048
    app: str = "pong"
    app_dir: Path = APPS_DIR
    cpus: list[int] | None = None
    memory_limit_bytes: int | None = None
    host: str = "127.0.0.1"
    env: tuple[tuple[str, str], ...] = ()  # WSGIBENCH_* settings for the app
    access_log: bool = False


def availability(recipe: ServerRecipe) -> tuple[bool, str]:
    """(usable now, reason when not)."""
    if recipe.unavailable:
        return False, recipe.unavailable
    missing = missing_binaries(recipe)
    if missing:
        pkgs = " ".join(recipe.system_packages) or " ".join(missing)
        return False, f"needs {', '.join(missing)}: apt-get install {pkgs}"
    if recipe.env and _envs.installed(recipe.env) is None:
        return False, f"not installed: wsgibench install {recipe.name}"
    return True, ""


def installed_version(recipe: ServerRecipe) -> str | None:
    if recipe.stdlib_python:
        import platform

        return f"python {platform.python_version()}"
    if recipe.env is None:
        from ._environment import binary_version

        return binary_version(recipe.project)
    env = _envs.installed(recipe.env)
    if env is None:
        return None
    if recipe.version_of is None:  # a standard-library server: its version is Python's
        return f"python {_envs.python_version(env)}"
    return env.version(recipe.version_of)


def start(recipe: ServerRecipe, options: ServeOptions) -> tuple[RunningServer, Path]:
    """Start the server; returns it and its scratch dir (the caller removes the dir after stop)."""
    ok, why = availability(recipe)
    if not ok:
        raise EnvironmentProblem(f"{recipe.name}: {why}")
    python = _envs.installed(recipe.env).python if recipe.env else None
    if python is None and recipe.stdlib_python:
        python = Path(sys.executable)
    last: StartupError | None = None
    for _ in range(PORT_ATTEMPTS):
        workdir = Path(tempfile.mkdtemp(prefix=f"wsgibench-{recipe.name}-"))
        workdir.chmod(0o755)  # servers that drop privileges (Apache children) must read it
        # A private copy of the apps: readable by those users wherever wsgibench is installed.
        app_dir = Path(shutil.copytree(options.app_dir, workdir / "apps",
                                       ignore=shutil.ignore_patterns("__pycache__")))
        ctx = LaunchContext(
            host=options.host, port=free_port(options.host), internal_port=free_port(options.host),
            workers=options.workers, threads=options.threads, backlog=options.backlog,
            app=options.app, app_dir=app_dir, workdir=workdir, python=python,
            launchers=LAUNCHERS_DIR, access_log=options.access_log,
        )
        cgroup = MemoryCgroup.create(options.memory_limit_bytes)
        try:
            assert recipe.launch is not None
            server = launch(recipe.launch(ctx), ctx, options.cpus, cgroup,
                            recipe.start_timeout_s, dict(options.env))
            return server, workdir
        except StartupError as exc:
            cgroup.remove()
            shutil.rmtree(workdir, ignore_errors=True)
            last = exc
            if "in use" not in str(exc).lower():
                raise
    assert last is not None
    raise StartupError(f"{last} (tried {PORT_ATTEMPTS} fresh ports)")
