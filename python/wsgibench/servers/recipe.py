"""What a catalog entry is: the environment to install, the binaries it needs and how to find them,
the processes to launch, and how to read its version."""

from __future__ import annotations

import enum
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wsgibench.machine.binaries import banner_version
from wsgibench.machine.process import Command
from wsgibench.machine.venvs import PythonEnv

__all__ = [
    "Binary",
    "Command",
    "Flavour",
    "Interface",
    "LaunchContext",
    "PythonEnv",
    "ServerRecipe",
    "launch_script",
]

# The launchers' shared module (launchkit.py): put on the launcher processes' PYTHONPATH.
LAUNCHKIT_DIR = Path(__file__).resolve().parent / "_launchkit"


class Interface(enum.StrEnum):
    """How the server calls the app: each server gets the study's app in its own interface."""

    WSGI = "WSGI"
    ASGI = "ASGI"
    NATIVE = "native"  # the server's own interface, named by the recipe's native_api (RSGI)


class Flavour(enum.StrEnum):
    PROCESS = "process/thread"
    GREENLET = "greenlet"
    CALLBACK = "callback"
    NATIVE = "native"
    REFERENCE = "non-Python reference"  # e.g. PHP-FPM behind nginx: a yardstick, not a contender


def _on_path(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


@dataclass(frozen=True)
class Binary:
    """An executable a recipe needs from the system, and how to find it here."""

    name: str
    find: Callable[[], str | None] | None = None  # default: PATH, then /usr/sbin and /sbin
    # The key of its version in the environment stored with a study ("nginx_version"), asked of
    # every binary the study's recipes need; empty: its version is not stored there.
    stored_as: str = ""

    def path(self) -> str | None:
        return self.find() if self.find else _on_path(self.name)

    def version(self, flag: str = "-v") -> str | None:
        """The version its own banner prints (`nginx -v`, `apache2 -v`, `php-fpm -v`)."""
        exe = self.path()
        return banner_version([exe, flag]) if exe else None


@dataclass(frozen=True)
class LaunchContext:
    """Everything a recipe needs to build its command lines for one start."""

    host: str
    port: int  # the port the engine talks to
    internal_port: int  # a second free port, for the app server behind a front proxy
    workers: int
    threads: int
    backlog: int
    app: str  # module name inside app_dir, exposing the callable
    app_dir: Path
    workdir: Path  # private scratch directory for configs, pid and log files
    python: Path | None  # the env's interpreter, None for non-Python entries
    access_log: bool = False  # a study may turn access logging on, to show what it costs
    callable: str = "app"  # the app's callable in its module
    # The threads were set (a tuning trial): 1 is one thread, not the server's default pool.
    exact_threads: bool = False
    # Folders after app_dir on the server's path: the app's own dependencies (machine/appdeps).
    app_path: tuple[Path, ...] = ()
    chdir: Path | None = None  # the working directory the app runs in (None: app_dir)
    # The server's runtime mode, one of its recipe's `runtime_modes` (None: the server's default).
    runtime_mode: str | None = None
    # The release a server at a release (`name@version`, servers/versions.py) runs, for recipes
    # whose command line changed between releases; None: the catalog's own.
    release: str | None = None
    # TLS loads: the certificate and key the server serves (None: plain TCP).
    tls_cert: Path | None = None
    tls_key: Path | None = None

    @property
    def app_ref(self) -> str:
        """`module:callable`, as servers' command lines name an app."""
        return f"{self.app}:{self.callable}"

    @property
    def threads_set(self) -> bool:
        """Threads were asked for (more than 1, or exactly 1 in a tuning trial): otherwise the
        server keeps its own default pool."""
        return self.threads > 1 or self.exact_threads

    @property
    def app_cwd(self) -> Path:
        return self.chdir or self.app_dir

    def launcher(self, script: Path, *extra: str) -> Command:
        """Run a launcher script in the env with the common options (see _launchkit)."""
        assert self.python is not None
        argv = [
            str(self.python),
            str(script),
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--app-dir",
            str(self.app_dir),
            "--app",
            self.app,
            "--callable",
            self.callable,
            "--backlog",
            str(self.backlog),
            "--workers",
            str(self.workers),
            "--threads",
            str(self.threads),
            *(["--exact-threads"] if self.exact_threads else []),
            *extra,
        ]
        return Command(argv, pythonpath=(str(LAUNCHKIT_DIR),))

    def env_bin(self, exe: str) -> str:
        assert self.python is not None
        return str(self.python.parent / exe)


Launch = Callable[[LaunchContext], list[Command]]


@dataclass(frozen=True)
class ServerRecipe:
    name: str
    project: str  # what the server is called upstream
    flavour: Flavour
    summary: str
    env: PythonEnv | None = None
    version_of: str | None = None  # distribution whose version is reported
    system_packages: tuple[str, ...] = ()  # Debian packages it needs
    binaries: tuple[Binary, ...] = ()  # executables it needs from the system (nginx, apache2)
    # The version of an entry without a venv (nginx, php-fpm), read from the running system.
    version: Callable[[], str | None] | None = None
    launch: Launch | None = None
    unavailable: str | None = None  # a reason that no install can fix
    multi_worker: bool = True  # whether `workers > 1` is meaningful
    # Whether it runs the study's `threads` per worker (a thread pool it sizes): tune searches them.
    takes_threads: bool = False
    # The runtime modes it can be started in (Granian: a single- or multi-threaded Rust runtime
    # per worker), a load's `runtime_mode`: tune searches them.
    runtime_modes: tuple[str, ...] = ()
    # The releases of `version_of` its command line is written for (a PEP 440 specifier such as
    # ">=20"; empty: any); a server at a release outside them (servers/versions.py) is unavailable.
    versions: str = ""
    # workers = "auto": the server's documented convention for N server CPUs ("N" or "2N+1")
    workers_rule: str = "N"
    # The machine's ceiling (nginx alone) always gets one worker per server CPU.
    workers_follow_cpus: bool = False
    handles: tuple[
        str, ...
    ] = ()  # pitfalls this recipe takes care of, shown by `servers --verbose`
    # Seconds the server may take to start answering (mod_wsgi-express configures Apache first).
    start_timeout_s: float = 20.0
    # The apps it can serve (tornado's native handlers: sleep and mixed); empty means every app.
    apps: tuple[str, ...] = ()
    # No env: run with wsgibench's own interpreter (the standard-library fault servers).
    stdlib_python: bool = False
    # Left out of `wsgibench servers`, `*` and the globs that match a listed entry (the fault
    # servers); named like any other entry.
    hidden: bool = False
    interface: Interface = Interface.WSGI
    # An ASGI server that runs the app's lifespan start-up (and shutdown) before serving; Daphne
    # 4.2 does not (an app that sets up at lifespan start-up meets requests unset on it).
    lifespan: bool = True
    # The server's own interface when `interface` is NATIVE ("RSGI", "tornado handlers").
    native_api: str = ""
    # What to show as its interface when it runs no Python app at all ("none": nginx answers
    # itself; "PHP": PHP-FPM), instead of the WSGI default.
    no_python_app: str = ""
    # What the server must run on, read from the running server (e.g. {"loop": "uvloop",
    # "http": "httptools"}): anything else is a fallback, flagged beside the number.
    expects: tuple[tuple[str, str], ...] = ()
    # How the server is given a certificate: arguments added to its command, `{cert}` and `{key}`
    # filled in (empty: its launch reads LaunchContext.tls_cert itself); None: no TLS here.
    tls_args: tuple[str, ...] | None = None
    # A server run from wsgibench's launcher (its Python API): the server's own command line
    # with the same settings, where it has one (waitress-serve), for `tune` to print; None: it
    # has none (bjoern), or its launch is its own command line already (gunicorn).
    deploy: Callable[[LaunchContext], list[str]] | None = None
    # The module that defines it (set by the catalog): its folder is the server's home.
    module: str = field(default="", compare=False)

    @property
    def interface_label(self) -> str:
        """WSGI, ASGI, or "native (RSGI)": what `servers` shows and refusals say."""
        if self.no_python_app:
            return self.no_python_app
        if self.interface == Interface.NATIVE and self.native_api:
            return f"native ({self.native_api})"
        return str(self.interface)

    def has_no_version_of(self, app: str) -> str:
        """Why it cannot take an app that has no version in its interface."""
        a = "an" if self.interface == Interface.ASGI else "a"
        version = self.native_api or self.interface
        return f"{a} {self.interface_label} server; app {app!r} has no {version} version"

    def auto_workers(self, cpus: int) -> tuple[int, str]:
        """Workers for `cpus` server CPUs by this server's convention, and how they were chosen."""
        if not self.multi_worker:
            return 1, "one process by design: 1 worker whatever the CPUs"
        if self.workers_rule == "2N+1":
            return 2 * cpus + 1, f"(2 x {cpus} CPUs) + 1, {self.project}'s documented rule"
        return cpus, f"one worker per server CPU ({cpus})"

    def missing_binaries(self) -> list[str]:
        return [b.name for b in self.binaries if b.path() is None]

    def binary_versions(self) -> dict[str, str | None]:
        """The versions of its system binaries that a study's environment stores, by key."""
        return {b.stored_as: b.version() for b in self.binaries if b.stored_as}


def launch_script(script: Path, *extra: str) -> Launch:
    """The launch of a server that one launcher script starts (a launch*.py in its folder)."""

    def launch(ctx: LaunchContext) -> list[Command]:
        return [ctx.launcher(script, *extra)]

    return launch


def here(module_file: str, script: str = "launch.py") -> Path:
    """A launcher script beside the recipe module that names it."""
    return Path(module_file).resolve().parent / script
