"""The command line that deploys a tuned setting, as the trials ran it: the server's own (gunicorn,
uWSGI, Granian, uvicorn ...; a launcher-run server's own CLI where it has one, waitress-serve), or
wsgibench's launcher, said so, for a server without one; run from the app's folder."""

from __future__ import annotations

from pathlib import Path

from wsgibench.run.tune import Setting
from wsgibench.servers import LaunchContext, ServerRecipe, get, versions
from wsgibench.servers.recipe import LAUNCHKIT_DIR
from wsgibench.study.apps import AppSpec
from wsgibench.study.factory import SHIM_MODULE, is_call, shim_code
from wsgibench.study.userapps import with_interface


def command_line(
    setting: Setting, app: AppSpec, cwd: Path | None = None, host: str = "0.0.0.0", port: int = 8000
) -> str:
    """The command that runs this setting as the trial ran it, with the app in place: the
    server's own command line (gunicorn, uWSGI, Granian, uvicorn ...) or wsgibench's launcher;
    run from the app's folder, which a line above it names when that is not `cwd`."""
    recipe: ServerRecipe = get(setting.server)
    assert recipe.launch is not None
    if app.spec and not app.interface:  # read when the trials started: the server's own kind
        app = with_interface(app, recipe.interface.lower())
    module = app.module_for(recipe.interface, recipe.native_api) or app.name
    callable_, shim = app.callable_for(recipe.interface), ""
    if is_call(callable_):  # a factory: the module the trials imported, written out first
        shim = f"# {SHIM_MODULE}.py beside the app: {'; '.join(shim_code(module, callable_))}\n"
        module, callable_ = SHIM_MODULE, "app"
    ctx = LaunchContext(
        host=host,
        port=port,
        internal_port=port + 1,
        workers=setting.workers,
        threads=setting.threads,
        exact_threads=True,
        runtime_mode=setting.mode,
        release=versions.split(setting.server)[1],
        backlog=2048,
        app=module,
        callable=callable_,
        app_dir=Path("."),
        workdir=Path("."),
        python=Path("venv/bin/python"),
    )
    server = next(c for c in recipe.launch(ctx) if c.role == "server")
    argv = [f"{k}={v}" for k, v in server.env.items()] + server.argv
    if server.pythonpath:  # what the trials put first on the path (wsgibench's launcher's kit)
        argv.insert(0, "PYTHONPATH=" + ":".join(server.pythonpath))
    if LAUNCHKIT_DIR.as_posix() in server.pythonpath and recipe.deploy is not None:
        script, *rest = recipe.deploy(ctx)  # the server's own, deployable
        argv = ["PYTHONPATH=.", f"venv/bin/{script}", *rest]
        shim += (
            f"# {recipe.project}'s own command line with the trial's settings (the trials ran "
            "the same through wsgibench's launcher; venv/: one with the server's packages)\n"
        )
    elif LAUNCHKIT_DIR.as_posix() in server.pythonpath:
        shim += (
            f"# {recipe.project} has no command line of its own: this runs wsgibench's launcher "
            "(its kit on the path), which calls the server's Python API with these settings, as "
            "the trials ran it (venv/: one with the server's packages)\n"
        )
    where = ""
    if cwd is not None and app.spec and app.folder != cwd.resolve():
        folder = app.folder
        shown = (
            folder.relative_to(cwd.resolve()) if folder.is_relative_to(cwd.resolve()) else folder
        )
        where = f"# from {shown}/ (the app's folder, first on the path as the trials ran it)\n"
    return where + shim + " ".join(a if " " not in a else repr(a) for a in argv)
