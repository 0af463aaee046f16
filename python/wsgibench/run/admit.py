"""Whether a server can take a cell's app at all (an unavailable cell says why), and what a cell
stores of the app it served."""

from __future__ import annotations

from typing import Any

from wsgibench.machine import venvs
from wsgibench.machine.appdeps import AppDeps
from wsgibench.results.verdict import CellStatus
from wsgibench.run.appcheck import PreparedApps
from wsgibench.run.outcome import CellOutcome
from wsgibench.run.serve import availability, lifespan_unrun, server_python
from wsgibench.servers import ServerRecipe
from wsgibench.servers.recipe import Interface
from wsgibench.study.apps import AppSpec
from wsgibench.study.loads import Load


def tls_refusal(recipe: ServerRecipe, load: Load) -> CellOutcome | None:
    """A TLS load on a server wsgibench cannot give a certificate (recorded as unavailable)."""
    if not load.tls or recipe.tls_args is not None:
        return None
    return CellOutcome(
        CellStatus.UNAVAILABLE,
        f"takes no certificate here: wsgibench starts {recipe.name} without TLS",
    )


def refusal(
    recipe: ServerRecipe, app: AppSpec, workers: int, apps: PreparedApps | None = None
) -> CellOutcome | None:
    """Why this server cannot take this cell at all (recorded as unavailable), or None."""
    if recipe.apps and app.name not in recipe.apps:  # its own handlers (tornado's native pair)
        return CellOutcome(
            CellStatus.UNAVAILABLE,
            f"serves only the app(s) {', '.join(recipe.apps)}, not {app.shown!r}",
        )
    if recipe.no_python_app and (app.spec or app.requirements):
        return CellOutcome(
            CellStatus.UNAVAILABLE,
            f"runs no Python app ({recipe.interface_label}): it cannot serve {app.shown!r}",
        )
    if not recipe.apps and app.module_for(recipe.interface, recipe.native_api) is None:
        why = recipe.has_no_version_of(app.shown)
        if app.spec and recipe.interface == Interface.ASGI:  # Django's asgi.py, Falcon's asgi.App
            why += " (an app with an ASGI side names it with app_asgi, or --app-asgi)"
        return CellOutcome(CellStatus.UNAVAILABLE, why)
    ok, why = availability(recipe)
    if not ok:
        return CellOutcome(CellStatus.UNAVAILABLE, why)
    if workers > 1 and not recipe.multi_worker:
        return CellOutcome(
            CellStatus.UNAVAILABLE, f"runs one process: cannot use {workers} workers"
        )
    clash = _conflicts(recipe, app, apps)
    if clash:
        return CellOutcome(CellStatus.UNAVAILABLE, "; ".join(clash[:3]))
    return None


def _conflicts(recipe: ServerRecipe, app: AppSpec, apps: PreparedApps | None) -> list[str]:
    """The packages the app's lock and the server's venv pin at different versions."""
    deps = apps.deps_for(app, server_python(recipe)) if apps else None
    env = venvs.installed(recipe.env) if recipe.env else None
    if deps is None or env is None:
        return []
    return deps.conflicts(env.packages, recipe.name, app.name)


def app_info(app: AppSpec, recipe: ServerRecipe, deps: AppDeps | None) -> dict[str, Any]:
    """What a cell stores of the app it served: two cells with one lock hash ran the same
    dependencies (compare names a difference)."""
    return {
        "name": app.name,
        "interface": recipe.interface_label,
        "callable": f"{app.module_for(recipe.interface, recipe.native_api)}:"
        f"{app.callable_for(recipe.interface)}",
        "lock_sha256": deps.lock_sha256 if deps else None,
        "packages": deps.packages if deps else {},
        # One's own app: how long it took to be ready before the first cell (run/serve.py).
        **({"startup_s": app.startup_s, "lifespan": app.lifespan} if app.spec else {}),
    }


def say_lifespan_unrun(outcome: CellOutcome, recipe: ServerRecipe, app: AppSpec) -> None:
    """One's own ASGI app on a server that runs no lifespan met its requests without what its
    start-up sets up: a note, and beside the reason when that disqualified it."""
    if lifespan_unrun(recipe, app):
        unrun = f"{recipe.name} runs no ASGI lifespan: the app's start-up never ran"
        outcome.notes.append(unrun)
        if outcome.status == CellStatus.DISQUALIFIED and outcome.reason:
            outcome.reason += f" ({unrun})"
