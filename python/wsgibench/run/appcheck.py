"""Before the first cell: each app of the study with dependencies gets them installed for every
server's Python, and one's own app is imported once, apart from any server, so that an app that
does not import fails in one line naming it, and its interface is read from its callable."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from wsgibench.errors import EnvironmentProblem, UsageError
from wsgibench.machine import appdeps, venvs
from wsgibench.machine.appdeps import AppDeps
from wsgibench.machine.serverenv import server_environ
from wsgibench.run.serve import MAX_COPY_BYTES, availability, copy_size_over, server_python
from wsgibench.servers import ServerRecipe, catalog, get
from wsgibench.study.apps import AppSpec
from wsgibench.study.loads import Load
from wsgibench.study.model import Study
from wsgibench.study.userapps import with_interface

IMPORT_TIMEOUT_S = 120.0

# Run with -I in a fresh interpreter, in the server's Python (the standard library only): the
# app's folder and dependencies only, then the callable's kind and how long it took to be ready.
_PROBE = Path(__file__).with_name("_import_probe.py")


@dataclass
class PreparedApps:
    """The study's apps, ready: each with its interface known, and its dependencies per Python."""

    specs: dict[str, AppSpec] = field(default_factory=dict)  # by the app's name
    deps: dict[tuple[str, str], AppDeps] = field(default_factory=dict)  # (app, python minor)

    def app(self, study: Study, load: Load) -> AppSpec:
        spec = study.app_of(load)
        return self.specs.get(spec.name, spec)

    def deps_for(self, app: AppSpec, python: Path | None) -> AppDeps | None:
        if app.requirements is None or python is None:
            return None
        return self.deps.get((app.name, appdeps.python_minor(str(python))))


def prepare(
    study: Study, progress: Callable[[str], None] = lambda _m: None, some_taker: bool = True
) -> PreparedApps:
    """Install each app's dependencies for the Pythons of the servers that will run it, and read
    one's own app's interface from its callable; an error names the app, or (`some_taker`) that
    none of the study's servers can serve it."""
    out = PreparedApps()
    for load in study.loads:
        app = study.app_of(load)
        if app.name in out.specs or not (app.requirements or app.spec):
            continue
        if app.spec and copy_size_over(app.folder):
            raise UsageError(
                f"app {app.shown}: its folder {app.folder} holds over {MAX_COPY_BYTES >> 30} GiB,"
                " copied for every server start: put the app in a folder of its own, or name it"
                " by its path there (path/to/app.py:app)"
            )
        # The import is checked where the servers run the app: a server's own Python (its venv),
        # with the app's requirements and nothing of wsgibench's environment.
        checker, where = import_python(study.servers_of(load))
        # One folder per Python minor version: the first interpreter of each installs it.
        pythons = {_minor(checker): checker}
        for server in study.servers_of(load):
            if (found := _python(server)) is not None:
                pythons.setdefault(_minor(str(found)), str(found))
        for minor, interpreter in sorted(pythons.items()):
            if app.requirements is not None:
                progress(f"app {app.shown}: its requirements for Python {minor}")
                out.deps[(app.name, minor)] = appdeps.ensure(
                    app.name, app.requirements, app.lock, interpreter, shown=app.shown
                )
        deps = out.deps.get((app.name, _minor(checker)))
        out.specs[app.name] = check_import(app, checker, deps, study.app_env, where)
        if some_taker:
            _some_server_takes(out.specs[app.name], study.servers_of(load))
    return out


# The built-in study with the representative servers of each interface.
_STUDY_OF = {"WSGI": "quick", "ASGI": "asgi"}


def _takes(recipe: ServerRecipe, app: AppSpec) -> bool:
    """Whether a server can serve the app in its interface (installed or not)."""
    usable = not recipe.apps and not recipe.no_python_app
    return usable and app.module_for(recipe.interface, recipe.native_api) is not None


def _some_server_takes(app: AppSpec, servers: tuple[str, ...]) -> None:
    """A UsageError, before anything runs, when one's own app has no server in the study that
    serves its interface (an ASGI app in `quick`): it names the servers and the study that do."""
    if not app.spec or any(_takes(get(name), app) for name in servers):
        return
    kind = "ASGI" if app.interface == "asgi" else "WSGI"
    here = [  # installed, or installable on this machine (`run` installs what it lacks)
        n
        for n, r in catalog().items()
        if _takes(r, app) and not (r.hidden or r.unavailable or r.missing_binaries())
    ]
    raise UsageError(
        f"app {app.shown} is {kind} and none of this study's servers serves {kind}: give the same "
        f"options to `wsgibench run {_STUDY_OF[kind]}`, or name servers with --servers (the "
        f"{kind} ones this machine can run: {', '.join(here)})"
    )


def _hint(app: AppSpec, error: str) -> str:
    """What to do about a module one's own app imports and no requirements name: the servers run
    in environments of their own, not the one wsgibench runs in."""
    if not app.spec or app.requirements is not None or "ModuleNotFoundError" not in error:
        return ""
    return (
        " (servers run in their own environments: name the app's dependencies with"
        " --requirements requirements.txt, or `requirements` in a study file)"
    )


def import_python(servers: tuple[str, ...]) -> tuple[str, str]:
    """The interpreter one's app is imported in before the first cell, and whose it is: the
    first of the servers that runs a Python app in a venv of its own (then one that runs on
    wsgibench's interpreter); wsgibench's base interpreter only when none is installed."""
    found: list[tuple[bool, str, str]] = []
    for name in servers:
        recipe = get(name)
        if recipe.apps or recipe.no_python_app or not availability(recipe)[0]:
            continue
        interpreter = server_python(recipe)
        if interpreter is not None:
            found.append((recipe.env is None, str(interpreter), f"{name}'s environment"))
    if found:
        _, chosen, where = min(found, key=lambda f: f[0])  # the first with a venv of its own
        return chosen, where
    return base_python(), "wsgibench's own Python (no server of the load is installed)"


def check_import(
    app: AppSpec, python: str, deps: AppDeps | None, env: dict[str, str], where: str = ""
) -> AppSpec:
    """Import the app (and its ASGI side) in a fresh interpreter, `python` (`where`: whose it
    is, said when it fails); the app with its interface."""
    targets = [(app.module_name, app.callable)]
    if app.asgi_module and (app.asgi_module, app.asgi_callable) != targets[0]:
        targets.append((app.asgi_module, app.asgi_callable))
    paths = [str(deps.site)] if deps else []
    # The study's own PYTHONPATH (app_env), which a server gets after the app and its dependencies.
    paths += [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    # One's own app's lifespan start-up is timed; a built-in's (a database pool) is left alone.
    given = [str(app.folder), paths, targets, bool(app.spec)]
    argv = [python, "-I", str(_PROBE), json.dumps(given)]
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            cwd=app.workdir or app.folder,
            env={**server_environ(), **env},  # as the server will start
            timeout=IMPORT_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"app {app.shown}: importing it took over {IMPORT_TIMEOUT_S:g} s"
        ) from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["exited without a word"])[-1]
        said = f" in {where}" if where else ""
        raise UsageError(f"app {app.shown} does not import{said}: {last[:300]}{_hint(app, last)}")
    kinds, took, lifespan = json.loads(proc.stdout.strip().splitlines()[-1])
    if len(kinds) > 1 and not kinds[1]:
        raise UsageError(f"app {app.shown}: app_asgi {app.asgi_module} is not an ASGI callable")
    if not app.spec:  # a built-in: its modules say their interfaces
        return app
    app = replace(app, startup_s=round(float(took), 3), lifespan=bool(lifespan))
    return with_interface(app, app.interface or ("asgi" if kinds[0] else "wsgi"))


def base_python() -> str:
    """The interpreter the servers' venvs are made from (wsgibench's own, outside its venv)."""
    return venvs.base_interpreter()


def _python(server: str) -> Path | None:
    recipe = get(server)
    if not availability(recipe)[0]:
        return None
    return server_python(recipe)


def _minor(python: str) -> str:
    try:
        return appdeps.python_minor(python)
    except EnvironmentProblem:
        return "?"
