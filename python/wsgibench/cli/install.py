"""`wsgibench install` and `wsgibench check`: build server environments and try one server."""

from __future__ import annotations

import shutil
import time

from rich.console import Console

from wsgibench.errors import EnvironmentProblem, UsageError, WsgibenchError
from wsgibench.machine import appdeps, locks, venvs
from wsgibench.run import checks
from wsgibench.run.appcheck import base_python
from wsgibench.run.serve import ServeOptions, availability, installed_version, start
from wsgibench.servers import ServerRecipe, get, listed
from wsgibench.study.apps import APPS
from wsgibench.study.overrides import Overrides


def _selected(names: list[str], all_: bool, study: str | None) -> list[ServerRecipe]:
    if all_:
        return [r for r in listed().values() if not r.unavailable]
    if study:
        from wsgibench.study.model import load_study

        return [get(n) for n in load_study(study).server_names()]
    if not names:
        raise UsageError("name at least one server, or --all, or --study NAME")
    return [get(n) for n in names]


def install_servers(
    names: list[str], all_: bool, study: str | None, force: bool, console: Console
) -> list[str]:
    """Install each selected recipe's env; returns the names that failed (others still install)."""
    failures = []
    for recipe in _selected(names, all_, study):
        if recipe.unavailable:
            console.print(f"[yellow]skip[/] {recipe.name}: {recipe.unavailable}")
            continue
        missing = recipe.missing_binaries()
        if missing:
            console.print(
                f"[red]fail[/] {recipe.name}: needs {', '.join(missing)} "
                f"(apt-get install {' '.join(recipe.system_packages)})"
            )
            failures.append(recipe.name)
            continue
        if recipe.env is None:
            console.print(f"[green]ok[/]   {recipe.name}: system packages only")
            continue
        started = time.monotonic()
        try:
            with console.status(f"installing {recipe.name} ({recipe.env.name})"):
                venvs.install(recipe.env, force=force)
        except WsgibenchError as exc:
            console.print(f"[red]fail[/] {recipe.name}: {exc}")
            failures.append(recipe.name)
            continue
        version = installed_version(recipe)  # python X.Y.Z for standard-library servers
        what = f"{recipe.version_of} {version}" if recipe.version_of else version
        console.print(f"[green]ok[/]   {recipe.name}: {what} ({time.monotonic() - started:.0f} s)")
    return failures


def lock_servers(names: list[str], all_: bool, console: Console) -> list[str]:
    """Write the lock of each selected server's venv (once per venv); returns those that failed."""
    failures, done = lock_apps([n for n in names if n in APPS], console), set()
    names = [n for n in names if n not in APPS]
    if not names and not all_:
        return failures
    for recipe in _selected(names, all_, None):
        env = recipe.env
        if recipe.unavailable or env is None or not env.requirements or env.name in done:
            continue
        done.add(env.name)
        try:
            path = venvs.write_lock(env)
        except WsgibenchError as exc:
            console.print(f"[red]fail[/] {env.name}: {exc}")
            failures.append(recipe.name)
            continue
        console.print(f"[green]ok[/]   {env.name}: {path} ({len(locks.pins(path))} packages)")
    return failures


def lock_apps(names: list[str], console: Console) -> list[str]:
    """Write the lock of each named built-in app with dependencies (the frameworks)."""
    failures = []
    for name in names:
        app = APPS[name]
        if app.requirements is None or app.lock is None:
            console.print(f"[red]fail[/] {name}: a built-in app with no dependencies to lock")
            failures.append(name)
            continue
        uv = venvs.uv_binary()
        try:
            if uv is None:
                raise EnvironmentProblem("locking needs uv")
            appdeps.compile_lock(uv, name, app.requirements, base_python(), app.lock)
        except WsgibenchError as exc:
            console.print(f"[red]fail[/] {name}: {exc}")
            failures.append(name)
            continue
        console.print(
            f"[green]ok[/]   app {name}: {app.lock} ({len(locks.pins(app.lock))} packages)"
        )
    return failures


def check_server(name: str, keep: bool, console: Console, app: Overrides | None = None) -> None:
    recipe = get(name)
    if app is not None and app != Overrides() and app.app is None:  # before anything is looked at
        raise UsageError("--app-asgi, --requirements, --path and --app-env go with --app: your app")
    ok, why = availability(recipe)
    if not ok:
        raise EnvironmentProblem(f"{name} is not available here: {why}")
    options = _own_app(name, app) if app is not None and app != Overrides() else ServeOptions()
    server, workdir = start(recipe, options)
    try:
        caps = checks.check(server.host, server.port, options.app.probe)
        pids = [p.pid for p in server.processes()]
        console.print(f"{name} on {server.host}:{server.port} (pids {pids})")
        if options.app.spec:  # `pong` below is the probe's answer: the app's, on its path
            probe = options.app.probe
            said = f"  app {options.app.shown}: the probe wants a {probe.describe()}"
            console.print(said, highlight=False)
        for key, value in caps.as_dict().items():
            if value not in ("", None, [], {}):  # nothing to say: no line
                console.print(f"  {key}: {value}", highlight=False)
        if keep:
            console.print("running; Ctrl-C stops it")
            while server.dead() is None:
                time.sleep(0.5)
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _own_app(name: str, given: Overrides) -> ServeOptions:
    """The server's options with one's own app, made ready as a run makes it (its dependencies
    installed, imported once); refused in one line when the server cannot serve it."""
    from pathlib import Path

    from wsgibench.run.admit import refusal
    from wsgibench.run.appcheck import prepare
    from wsgibench.run.serve import server_python
    from wsgibench.study.model import parse_study

    load = {"name": "check", "model": "closed", "levels": [1], "duration_s": 1}
    table, _ = given.app_table({"servers": [name], "load": [load]}, [])
    study = parse_study(table, "check", Path.cwd(), Path.cwd())
    prepared = prepare(study, some_taker=False)  # this one server's refusal says why, below
    app = prepared.app(study, study.loads[0])
    refused = refusal(get(name), app, 1, prepared)
    if refused is not None:
        raise UsageError(f"{name} cannot serve app {app.shown}: {refused.reason}")
    deps = prepared.deps_for(app, server_python(get(name)))
    env = tuple(sorted({**app.env, **study.app_env}.items()))  # as a run's cell sets them
    return ServeOptions(app=app, app_path=(deps.site,) if deps else (), env=env)
