"""The `wsgibench show` and `wsgibench export` click commands (registered in cli.main)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from wsgibench.cli.kit import console, err, friendly, stored_results

if TYPE_CHECKING:
    from wsgibench.results.store import Store


def _open_store(path: Path | None) -> Store:
    from wsgibench.paths import default_results
    from wsgibench.results.store import Store

    return Store(path or default_results(), create=False, read_only=True)


@click.command("show")
@stored_results
@click.option("--study", "study_id", type=int, help="Study id (default: the latest).")
@click.option(
    "--sort",
    type=click.Choice(["rps", "p50", "p99", "errors", "cpu", "memory"]),
    default="rps",
    show_default=True,
    help="Order the servers of each load and level by this, best first.",
)
@click.option("--level", "levels", help="Only these levels, e.g. 50,500.")
@click.option("--server", "servers", help="Only these servers, e.g. bjoern,waitress.")
@click.option(
    "--wide",
    is_flag=True,
    help="Full notes and behaviour instead of short tags, and each cell's wrong replies quoted.",
)
@click.option(
    "--steps", is_flag=True, help="Also list each capacity load's steps: offered, met or missed."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "md", "csv", "json"]),
    default="table",
    show_default=True,
    help="The same tables as a terminal table, Markdown, CSV or JSON (numbers as numbers in "
    "JSON and CSV, each table under its name: cells, kinds, capacity, steps, tuning, seed).",
)
@friendly
def show_command(
    results: Path | None,
    study_id: int | None,
    sort: str,
    levels: str | None,
    servers: str | None,
    wide: bool,
    steps: bool,
    fmt: str,
) -> None:
    """Show a stored study: per load and level, servers best first, the nginx ceiling on top;
    per request kind, capacities, a tuning's trials and the verdicts against the seed. A
    --server, --level or --study that matches nothing is an error (exit 2) naming what is
    there."""
    from wsgibench.cli.show import show as show_study
    from wsgibench.study.overrides import split_list

    store = _open_store(results)
    show_study(
        store,
        console,
        study_id,
        sort=sort,
        levels=set(split_list(levels, float, "--level")) if levels else None,
        servers=set(split_list(servers, str, "--server")) if servers else None,
        wide=wide,
        fmt=fmt,
        steps=steps,
    )


@click.command("export")
@stored_results
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True
)
@click.option("--study", "study_id", type=int, help="Study id (default: the latest).")
@click.option("--out", type=click.Path(path_type=Path), help="Write here instead of stdout.")
@friendly
def export_command(results: Path | None, fmt: str, study_id: int | None, out: Path | None) -> None:
    """Export a stored study: CSV of cell summaries, or JSON of everything stored."""
    from wsgibench.results.export import export_csv, export_json

    store = _open_store(results)
    text = export_csv(store, study_id) if fmt == "csv" else export_json(store, study_id)
    if out:
        out.write_text(text)
        err.print(f"wrote {out}")
    else:
        click.echo(text, nl=False)
