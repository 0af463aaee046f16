"""The `wsgibench report` and `wsgibench compare` click commands (registered in cli.main)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from wsgibench.cli.kit import console, err, friendly, stored_results

if TYPE_CHECKING:
    from wsgibench.results.store import Store


def _store(path: Path | None) -> Store:
    from wsgibench.paths import default_results
    from wsgibench.results.store import Store

    return Store(path or default_results(), create=False, read_only=True)


@click.command("report")
@stored_results
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Directory for report.html, summary.md and charts/*.png.",
)
@click.option("--study", "study_id", type=int, help="Study id (default: the latest).")
@click.option("--png/--no-png", default=True, show_default=True, help="Also write a PNG per chart.")
@friendly
def report_command(results: Path | None, out: Path, study_id: int | None, png: bool) -> None:
    """Write a self-contained HTML report, PNG charts and a Markdown summary of a stored study."""
    from wsgibench.report import write_report

    files = write_report(_store(results), out, study_id, png=png)
    console.print(f"wrote {files.html}")
    console.print(f"wrote {files.markdown}")
    if files.pngs:
        console.print(
            f"wrote {len(files.pngs)} chart{'s' if len(files.pngs) != 1 else ''} in "
            f"{files.pngs[0].parent}" + (f" (headline: {files.headline})" if files.headline else "")
        )


@click.command("compare")
@click.argument("a", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.argument("b", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--study-a",
    type=int,
    help="Study id in A (default: its latest; B's store: the run of B's study before B's).",
)
@click.option("--study-b", type=int, help="Study id in B (default: its latest).")
@click.option(
    "--force", is_flag=True, help="Compare even if the machines or engine versions differ."
)
@click.option(
    "--markdown",
    "markdown",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also write the comparison as Markdown to this file.",
)
@friendly
def compare_command(
    a: Path | None,
    b: Path | None,
    study_a: int | None,
    study_b: int | None,
    force: bool,
    markdown: Path | None,
) -> None:
    """Compare two result stores cell by cell: throughput and latency changes, with a significance
    test; capacity loads by capacity, changed only when the intervals do not overlap. One store
    (none: the default store): its latest run against the run of the same study before it."""
    from wsgibench.report.compare import markdown as to_markdown
    from wsgibench.report.compare import print_table
    from wsgibench.results.compare import compare_stores, runs_to_compare

    store_a, store_b = _store(a), _store(b or a)
    study_a, study_b = runs_to_compare(store_a, store_b, study_a, study_b)
    result = compare_stores(store_a, store_b, study_a, study_b, force=force)
    print_table(result, console)
    if markdown:
        markdown.write_text(to_markdown(result), encoding="utf-8")
        err.print(f"wrote {markdown}")
