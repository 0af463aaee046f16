"""What a catalog entry is: the environment to install, the processes to launch, how to name it."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


class Flavour(enum.StrEnum):
    PROCESS = "process/thread"
    GREENLET = "greenlet"
    CALLBACK = "callback"
    NATIVE = "native"
    REFERENCE = "non-Python reference"  # e.g. PHP-FPM behind nginx: a yardstick, not a contender


@dataclass(frozen=True)
class PythonEnv:
    """A venv built from pinned requirements; recipes needing the same packages share one."""

    name: str
    requirements: tuple[str, ...]
    # Installed afterwards with --no-deps (meinheld pins an old greenlet it cannot build with).
    no_deps: tuple[str, ...] = ()
    # Constraints applied while building sdists (fastwsgi needs setuptools < 81).
    build_constraints: tuple[str, ...] = ()
    # mod_wsgi links against libpython: the venv must come from Debian's /usr/bin/python3.
    system_python: bool = False


@dataclass(frozen=True)
class LaunchContext:
    """Everything a recipe needs to build its command lines for one start."""

    host: str
    port: int  # the port the engine talks to
    internal_port: int  # a second free port, for the app server behind a front proxy
    workers: int
    threads: int
    backlog: int
    app: str  # module name inside app_dir, exposing `app`
    app_dir: Path
    workdir: Path  # private scratch directory for configs, pid and log files
    python: Path | None  # the env's interpreter, None for non-Python entries
    launchers: Path  # directory of the launcher scripts
    access_log: bool = False  # a study may turn access logging on, to show what it costs

    def launcher(self, name: str, *extra: str) -> list[str]:
        """argv running launchers/NAME.py in the env with the common options."""
        assert self.python is not None
        return [
            str(self.python), str(self.launchers / f"{name}.py"),
            "--host", self.host, "--port", str(self.port),
            "--app-dir", str(self.app_dir), "--app", self.app,
            "--backlog", str(self.backlog), "--workers", str(self.workers),
            "--threads", str(self.threads), *extra,
        ]

    def env_bin(self, exe: str) -> str:
        assert self.python is not None
        return str(self.python.parent / exe)


@dataclass(frozen=True)
class Command:
    """One process to start; every command of a recipe is started in its own process group."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    role: str = "server"  # "server", or "front" for nginx/Apache in front of it
    # Files (path relative to workdir -> text) written before the process starts.
    files: dict[str, str] = field(default_factory=dict)
    # The port this process listens on; the next command starts once it answers TCP.
    listens_on: int | None = None


@dataclass(frozen=True)
class ServerRecipe:
    name: str
    project: str  # what the server is called upstream
    flavour: Flavour
    summary: str
    env: PythonEnv | None = None
    version_of: str | None = None  # distribution whose version is reported
    system_packages: tuple[str, ...] = ()  # Debian packages it needs
    binaries: tuple[str, ...] = ()  # executables that must be on PATH (nginx, apache2)
    launch: Callable[[LaunchContext], list[Command]] | None = None
    unavailable: str | None = None  # a reason that no install can fix
    multi_worker: bool = True  # whether `workers > 1` is meaningful
    handles: tuple[str, ...] = ()  # pitfalls this recipe takes care of, shown by `servers --verbose`
    default_workers: int = 1
    # Seconds the server may take to start answering (mod_wsgi-express configures Apache first).
    start_timeout_s: float = 20.0
    # The apps it can serve (tornado's native handlers: sleep and mixed); empty means every app.
    apps: tuple[str, ...] = ()
    # No env: run with wsgibench's own interpreter (the standard-library fault servers).
    stdlib_python: bool = False


def launch_script(name: str) -> Callable[[LaunchContext], list[Command]]:
    """The launch of a server that one launcher script starts (launchers/NAME.py in its venv)."""

    def launch(ctx: LaunchContext) -> list[Command]:
        return [Command(ctx.launcher(name))]

    return launch
