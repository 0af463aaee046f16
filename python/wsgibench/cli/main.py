"""The `wsgibench` command line: thin commands over the typed API; errors end in one line."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from wsgibench import __version__
from wsgibench.cli.kit import P, R, console, friendly

if TYPE_CHECKING:
    pass


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wsgibench")
def cli() -> None:
    """Reproducible, honest benchmarks of Python web servers."""


@cli.command()
@click.option("--verbose", "-v", is_flag=True, help="Also show the pitfalls each recipe handles.")
@click.option("--faults", is_flag=True, help="List the fault-injection test servers instead.")
@friendly
def servers(verbose: bool, faults: bool) -> None:
    """List every catalog entry: interface, flavour, availability here, installed version."""
    from wsgibench.run.serve import availability, installed_version
    from wsgibench.servers import listed

    table = Table(title="wsgibench server catalog")
    for col in ("name", "interface", "flavour", "available", "version", "notes"):
        table.add_column(col)
    for recipe in listed(hidden=faults).values():
        ok, why = availability(recipe)
        notes = why or recipe.summary
        if verbose and recipe.handles:
            notes += "\n  handles: " + "; ".join(recipe.handles)
        table.add_row(
            recipe.name,
            recipe.interface_label,
            str(recipe.flavour),
            "yes" if ok else "no",
            installed_version(recipe) or "-",
            notes,
        )
    console.print(table)


@cli.command()
@click.argument("names", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Install every entry that can be installed here.")
@click.option("--study", help="Install the servers a study uses.")
@click.option("--force", is_flag=True, help="Rebuild environments that exist.")
@friendly
def install(names: tuple[str, ...], all_: bool, study: str | None, force: bool) -> None:
    """Build the isolated environment of each named server from its pinned requirements."""
    from wsgibench.cli.install import install_servers

    failures = install_servers(list(names), all_=all_, study=study, force=force, console=console)
    if failures:
        sys.exit(1)


@cli.command()
@click.argument("names", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Lock every entry that has a venv.")
@friendly
def lock(names: tuple[str, ...], all_: bool) -> None:
    """Pin every package of each named server's venv, with hashes, in its folder's .lock file."""
    from wsgibench.cli.install import lock_servers

    if lock_servers(list(names), all_=all_, console=console):
        sys.exit(1)


@cli.command()
@click.argument("name")
@click.option("--keep", is_flag=True, help="Keep it running until Ctrl-C (to poke at it).")
@click.option(
    "--app", "app", metavar="SPEC", help="Your own app instead of pong (as run takes it)."
)
@click.option("--app-asgi", metavar="SPEC", help="With --app: its ASGI side.")
@click.option("--requirements", type=click.Path(), help="With --app: its dependencies.")
@click.option("--path", help="With --app: the request to probe it with (default /).")
@click.option("--app-env", multiple=True, metavar="KEY=VALUE", help="An app setting (repeatable).")
@friendly
def check(
    name: str,
    keep: bool,
    app: str | None,
    app_asgi: str | None,
    requirements: str | None,
    path: str | None,
    app_env: tuple[str, ...],
) -> None:
    """Start one server, run the behaviour checks (pong, HTTP/1.0, keep-alive, pipelining), stop it.
    With --app: on your own app, probed on --path."""
    from wsgibench.cli.install import check_server
    from wsgibench.study.overrides import Overrides

    given = Overrides(
        app=app, app_asgi=app_asgi, requirements=requirements, path=path, app_env=app_env
    )
    check_server(name, keep=keep, console=console, app=given)


def _results_option(fn: Callable[P, R]) -> Callable[P, R]:
    return click.option(
        "--results",
        "results",
        type=click.Path(path_type=Path),
        default=None,
        help="Results store (SQLite). Default: ./results/wsgibench.sqlite",
    )(fn)


@cli.command()
@click.option(
    "--keys", is_flag=True, help="Print the reference of every key a study file may have."
)
@friendly
def studies(keys: bool) -> None:
    """List the built-in studies (--keys: every key of a study file, as docs/studies.md)."""
    from wsgibench.study.model import builtin_names, load_study

    if keys:
        from wsgibench.study.reference import reference_markdown

        click.echo(reference_markdown(), nl=False)
        return
    for name in builtin_names():
        study = load_study(name)
        console.print(f"[bold]{name}[/]: {study.description} ({study.cell_count()} cells)")


@cli.command()
def apps() -> None:
    """The built-in apps and frameworks (a study's `app`), their interfaces and endpoints; your
    own app is named module:callable or path/to/file.py:callable."""
    from wsgibench.study.apps import APPS

    width = max(len(name) for name in APPS)
    for app in APPS.values():
        sides = "+".join(
            side
            for side, ok in (
                ("WSGI", app.wsgi),
                ("ASGI", app.asgi_module),
                ("RSGI", app.native_modules),
            )
            if ok
        )
        console.print(
            f"{app.name:{width}} {sides:14} {app.summary}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


@cli.command()
@click.argument("study")
@_results_option
@click.option(
    "--servers",
    help="Comma-separated servers (or globs: gunicorn-*) replacing the study's list; the "
    "study's nginx ceiling stays unless --no-ceiling.",
)
@click.option(
    "--ceiling/--no-ceiling",
    default=True,
    show_default=True,
    help="With --servers: keep the study's nginx ceiling (nginx-baseline).",
)
@click.option("--repeats", type=int, help="Repeats per cell.")
@click.option("--starts", type=int, help="Server starts per cell, the repeats spread over them.")
@click.option("--duration", type=float, help="Seconds per repeat, for every load that has one.")
@click.option("--levels", help="Comma-separated levels replacing every load's levels.")
@click.option(
    "--app-env",
    "app_env",
    multiple=True,
    metavar="KEY=VALUE",
    help="An app setting, e.g. WSGIBENCH_SLEEP_S=0.1 (repeatable).",
)
@click.option(
    "--install/--no-install",
    default=True,
    show_default=True,
    help="Build missing server environments first.",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue this study's unfinished run in the store: finished cells are kept.",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --resume: continue even if the machine or engine differs from the first run's.",
)
@click.option(
    "--report/--no-report",
    default=True,
    show_default=True,
    help="Write the HTML report (and PNG charts) beside the store when the study ends.",
)
@click.option(
    "--full", is_flag=True, help="A seed study at its seed's full size (its [full] table)."
)
@click.option(
    "--versions",
    type=click.Choice(["seed"]),
    help="seed: each server also at the release its seed ran, where the study names one.",
)
@click.option("--server-cpus", help="The server's CPUs, e.g. 0-3 (default: the study's layout).")
@click.option("--engine-cpus", help="The engine's CPUs, e.g. 4-7 (one engine thread per CPU).")
@click.option(
    "--cluster",
    metavar="ADDRESS",
    help="Send the load from every worker of this Dask scheduler (tcp://host:8786), one load "
    "host per worker.",
)
@click.option(
    "--load-hosts",
    type=click.IntRange(min=1),
    help="Send the load from N load hosts of a local Dask cluster started for the run.",
)
@click.option(
    "--server-host",
    metavar="ADDRESS",
    help="The address the server listens on and the load goes to (default 127.0.0.1).",
)
@click.option(
    "--app",
    "app",
    metavar="SPEC",
    help="Your own app instead of the study's: module:callable or path/to/file.py:callable "
    "(relative to the working directory). The study's request mix, probe and app settings, "
    "which were its app's, are left out.",
)
@click.option(
    "--path",
    "path",
    metavar="PATH",
    help="The one request to send (e.g. /api/items), replacing the study's request mix.",
)
@click.option(
    "--expect-status",
    type=click.IntRange(100, 999),
    help="With --path: the status of a valid reply (default 200).",
)
@click.option(
    "--requirements",
    metavar="FILE",
    help="Your app's dependencies: a requirements.txt or pyproject.toml (relative to the "
    "working directory), locked and installed beside each server's environment.",
)
@click.option(
    "--app-asgi",
    metavar="SPEC",
    help="With --app (its WSGI side): the same app's ASGI side, for the ASGI servers.",
)
@friendly
def run(
    study: str,
    results: Path | None,
    install: bool,
    resume: bool,
    force: bool,
    report: bool,
    **changed: Any,
) -> None:
    """Run STUDY (a built-in name or a TOML file) and store every repeat in the results store.

    \b
    Before the first cell, each request kind of each load is sent once to the load's first
    server and judged against its expect: a wrong reply stops the run (exit 2), quoting it.

    \b
    Exit codes: 0 done; 2 bad input (unknown name, malformed study, a wrong reply before the
    load); 3 environment (engine, system packages, store); 4 the run measured nothing (every
    cell, or every server of a load, was disqualified, unavailable or failed: the reasons are
    printed); 1 another failure; 130 interrupted.
    """
    from wsgibench.cli.run import run_study
    from wsgibench.study.overrides import Overrides, load_with

    # Every other option is a change to the study, named as Overrides names it.
    changes = Overrides(**changed)
    tuned = load_with(study, changes)[0]
    if tuned.tune is not None:  # `tune = { ... }`: the study is a tuning
        from wsgibench.cli.tune import tune_study

        tune_study(tuned, results, console)
        return
    run_study(
        study,
        results,
        changes,
        install=install,
        resume=resume,
        force=force,
        report=report,
        console=console,
    )


from wsgibench.cli.calibrate import calibrate_command  # noqa: E402
from wsgibench.cli.doctor import doctor_command  # noqa: E402
from wsgibench.cli.history import history_command  # noqa: E402
from wsgibench.cli.report import compare_command, report_command  # noqa: E402
from wsgibench.cli.show_command import export_command, show_command  # noqa: E402
from wsgibench.cli.traffic import traffic_command  # noqa: E402
from wsgibench.cli.tune import tune_command  # noqa: E402

COMMANDS = (doctor_command, report_command, compare_command, tune_command, history_command)
for command in (*COMMANDS, calibrate_command, traffic_command, show_command, export_command):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="wsgibench")
