"""The `wsgibench` command line: thin commands over the typed API; errors end in one line."""

from __future__ import annotations

import functools
import shutil
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from . import __version__
from ._errors import EXIT_INTERRUPTED, WsgibenchError

console = Console()
err = Console(stderr=True)


def _friendly(fn):
    """Bad input and broken environments end with one line and an exit code, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except WsgibenchError as exc:
            err.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True, soft_wrap=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            err.print("interrupted")
            sys.exit(EXIT_INTERRUPTED)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wsgibench")
def cli() -> None:
    """Reproducible, honest benchmarks of Python web servers."""


@cli.command()
@click.option("--verbose", "-v", is_flag=True, help="Also show the pitfalls each recipe handles.")
@_friendly
def servers(verbose: bool) -> None:
    """List every catalog entry: flavour, availability here, installed version."""
    from ._serve import availability, installed_version
    from .servers import catalog

    table = Table(title="wsgibench server catalog")
    for col in ("name", "flavour", "available", "version", "notes"):
        table.add_column(col)
    for recipe in catalog().values():
        ok, why = availability(recipe)
        notes = why or recipe.summary
        if verbose and recipe.handles:
            notes += "\n  handles: " + "; ".join(recipe.handles)
        table.add_row(recipe.name, str(recipe.flavour), "yes" if ok else "no",
                      installed_version(recipe) or "-", notes)
    console.print(table)


@cli.command()
@click.argument("names", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Install every entry that can be installed here.")
@click.option("--study", help="Install the servers a study uses.")
@click.option("--force", is_flag=True, help="Rebuild environments that exist.")
@_friendly
def install(names: tuple[str, ...], all_: bool, study: str | None, force: bool) -> None:
    """Build the isolated environment of each named server from its pinned requirements."""
    from ._install import install_servers

    failures = install_servers(list(names), all_=all_, study=study, force=force, console=console)
    if failures:
        sys.exit(1)


@cli.command()
@click.argument("name")
@click.option("--keep", is_flag=True, help="Keep it running until Ctrl-C (to poke at it).")
@_friendly
def check(name: str, keep: bool) -> None:
    """Start one server, run the behaviour checks (pong, HTTP/1.0, keep-alive, pipelining), stop it."""
    from ._install import check_server

    check_server(name, keep=keep, console=console)


def main() -> None:
    cli(prog_name="wsgibench")
