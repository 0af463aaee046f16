"""`wsgibench history`: many stores (runs over time, or over versions) as one timeline per cell
key, the change points found in each (the false discovery rate kept over every series), and with
--fail-on-regression a gate for maintainers' CI that exits 1 when the newest run is slower than
the stable level before it (its p-values adjusted over every cell the same way)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from wsgibench.cli.kit import console, friendly
from wsgibench.errors import UsageError, no_match
from wsgibench.results.changepoint import ALPHA, MIN_STEP, Change, Gate, study_gates
from wsgibench.results.history import ORDERS, Group, Timeline, names_in, read_history

GATE_ALPHA = ALPHA  # the gate's false discovery rate over every cell it judges


def show_history(groups: list[Group], out: Console, threshold: float | None) -> list[str]:
    """Print each group and its timelines; the regressions the gate found (with a threshold)."""
    failures: list[str] = []
    if len(groups) > 1:
        out.print(
            f"{len(groups)} groups of runs that cannot be compared (another machine or engine): "
            "each on its own",
            highlight=False,
        )
    for group in groups:
        out.print(f"\n[bold]{group.label}[/]: {len(group.runs)} run(s)", highlight=False)
        for run in group.runs:
            out.print(
                f"  {run.when}  {run.study} (id {run.study_id}) in {run.store}", highlight=False
            )
        gated = _gates(group.timelines)
        for timeline in sorted(group.timelines, key=lambda t: (t.server, t.load, t.level, t.key)):
            if len(timeline.points) < 2:
                continue
            out.print(_table(timeline))
            for line in findings(timeline):
                out.print(f"  {line}", highlight=False)
            verdict = gated.get(timeline.key)
            if threshold is not None and verdict is not None:
                failures += _gate(timeline, verdict, threshold)
    return failures


def _gates(timelines: list[Timeline]) -> dict[str, Gate]:
    """The gate of every timeline with at least 3 measured runs, adjusted over all of them."""
    judged = [t for t in timelines if len(t.measured()) >= 3]
    series = [[list(p.rps) for p in t.measured()] for t in judged]
    gates = study_gates(series, [t.rps_changes for t in judged], GATE_ALPHA)
    return {t.key: g for t, g in zip(judged, gates, strict=True)}


def findings(timeline: Timeline) -> list[str]:
    """Each change in words: a regression (req/s down, p99 up), an improvement, or a drift."""
    lines = []
    for change in timeline.rps_changes:
        what = "regression" if change.size < 0 else "improvement"
        lines.append(f"{what} in req/s, {_where(timeline, change)}: {change.describe(' req/s')}")
    for change in timeline.p99_changes:
        what = "regression" if change.size > 0 else "improvement"
        lines.append(f"{what} in p99, {_where(timeline, change)}: {change.describe(' µs')}")
    if len(timeline.measured()) < 4:
        lines.append(f"{len(timeline.measured())} measured run(s): too few to look for a change")
    elif not lines:
        lines.append("no change found")
    if left := timeline.left_out():
        lines.append(f"left out of the search: {left} run(s)")
    return lines


def _where(timeline: Timeline, change: Change) -> str:
    point = timeline.measured()[change.index]
    version = f", {timeline.server} {point.version}" if point.version else ""
    return f"from {point.run.when}{version}"


def _gate(timeline: Timeline, verdict: Gate, threshold: float) -> list[str]:
    if not verdict.regressed(threshold, GATE_ALPHA):
        return []
    return [
        f"{timeline.key}: newest run {verdict.newest:,.0f} req/s is {-verdict.size:.1%} below "
        f"the stable level {verdict.level:,.0f} of {verdict.baseline_runs} run(s) "
        f"(p = {verdict.p_value:.2g}, Benjamini–Hochberg adjusted over the cells gated, "
        f"threshold {threshold:.0%})"
    ]


def _table(timeline: Timeline) -> Table:
    steps = {c.index for c in timeline.rps_changes} | {c.index for c in timeline.p99_changes}
    table = Table(title=timeline.key, title_justify="left")
    for head in ("#", "run", "version", "req/s", "spread", "p99 ms", "p99 spread", "status", ""):
        table.add_column(
            head, justify="right" if head in ("#", "req/s", "spread", "p99 ms") else "left"
        )
    measured = timeline.measured()
    for i, point in enumerate(timeline.points, 1):
        rps = point.rps_median
        spread = f"{min(point.rps):,.0f}–{max(point.rps):,.0f}" if point.rps else "-"
        index = measured.index(point) if point in measured else None
        table.add_row(
            str(i),
            point.run.when,
            point.version or "-",
            f"{rps:,.0f}" if rps is not None else "-",
            spread,
            f"{point.p99_median_ms:.3g}" if point.p99_median_ms is not None else "-",
            _p99_spread(point.p99_us),
            point.status,
            "◆ change" if index in steps and index != 0 else "",
        )
    return table


def _p99_spread(p99_us: tuple[float, ...]) -> str:
    return f"{min(p99_us) / 1000:.3g}–{max(p99_us) / 1000:.3g}" if p99_us else "-"


def _threshold(value: str | None) -> float | None:
    if value is None:
        return None
    text = value.strip().rstrip("%")
    try:
        share = float(text) / 100
    except ValueError:
        raise UsageError(
            f"--fail-on-regression takes a percentage such as 5%, not {value!r}"
        ) from None
    if not 0 < share < 1:
        raise UsageError(
            f"--fail-on-regression takes a percentage between 0 and 100, not {value!r}"
        )
    return share


@click.command("history")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--results",
    "more",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A store, as PATHS (repeatable). Neither: the default store, where every run goes.",
)
@click.option("--study", help="Only the runs of this study.")
@click.option("--server", help="Only this server's cells.")
@click.option(
    "--order",
    type=click.Choice(ORDERS),
    default="time",
    show_default=True,
    help="Runs in the order they ran, or by the server's version.",
)
@click.option(
    "--min-step",
    type=click.FloatRange(min=0, max=100),
    default=MIN_STEP * 100,
    show_default=True,
    help="The smallest change of level reported, in percent.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path),
    help="Also write the timelines as an HTML page: one chart per server.",
)
@click.option(
    "--fail-on-regression",
    "fail_on",
    metavar="PCT",
    help="Exit 1 when a cell's newest run is this much below its stable level, significantly.",
)
@friendly
def history_command(
    paths: tuple[Path, ...],
    more: tuple[Path, ...],
    study: str | None,
    server: str | None,
    order: str,
    min_step: float,
    html_path: Path | None,
    fail_on: str | None,
) -> None:
    """Runs over time or over versions: per cell key a timeline of req/s and p99 across the
    stores (folders are searched for *.sqlite), each change of level found (binary
    segmentation, Student's t on the runs' medians, Bonferroni over the splits; the false
    discovery rate kept at 5 % over every series by Benjamini–Hochberg; invalid and contended
    runs left out, said), and with --fail-on-regression a gate for CI. Without PATHS: the
    default store (./results/wsgibench.sqlite), which holds every run made without --results."""
    from wsgibench.paths import default_results

    threshold = _threshold(fail_on)
    paths = (*paths, *more) or (default_results(),)
    where = ", ".join(str(p) for p in paths)
    studies, servers = names_in(paths, study)
    if not studies:
        raise UsageError(f"history: no finished run in {where}")
    if study is not None and study not in studies:
        raise no_match("finished run of study", study, sorted(studies), where)
    if server is not None and server not in servers:
        of = f" (runs of {study})" if study else ""
        raise no_match("server", server, sorted(servers), where + of)
    groups = read_history(paths, study, server, order, ALPHA, min_step / 100)
    if not groups:
        raise UsageError(f"history: no finished run in {where} matches")
    failures = show_history(groups, console, threshold)
    if html_path is not None:
        from wsgibench.report.history import write_history_html

        written = write_history_html(groups, order == "version", html_path)
        console.print(f"timelines: {written}", highlight=False)
    for failure in failures:
        console.print(f"REGRESSION {failure}", highlight=False)
    if failures:
        raise SystemExit(1)
