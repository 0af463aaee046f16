"""`wsgibench show`: a stored study as tables, one per load and level, servers best first, the
nginx ceiling on top; within 120 columns with short tags and their legend (`--wide`: full notes);
also as Markdown, CSV or JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from wsgibench.baseline import BASELINE
from wsgibench.cli.fit import print_table, terminal_width
from wsgibench.cli.kinds_table import figures_by_cell, markdown_kinds, print_kinds
from wsgibench.cli.quoted import print_quoted
from wsgibench.cli.show_data import Tables, cell_values, kind_values
from wsgibench.cli.show_more import More
from wsgibench.cli.show_rows import SHOW_LAYOUT, SORTS, STATUS_TAGS, TAGS, TOOL_COLUMNS, row
from wsgibench.errors import UsageError, no_match
from wsgibench.report.data import app_parts
from wsgibench.results.capacity_read import capacity_loads
from wsgibench.results.engine_plan import LEVEL_FIELDS
from wsgibench.results.kind_figures import KindFigures
from wsgibench.results.seed_errors import median_rate, seeds_text
from wsgibench.results.store import Store
from wsgibench.results.summary import (
    CellSummary,
    layout_text,
    load_hosts_text,
    summarise_study,
)
from wsgibench.results.verdict import CellStatus


# --sort KEY: (the summary metric, higher is better)
@dataclass
class Group:
    """One load at one level: its cells, the ceiling first, then best first."""

    load: str
    model: str
    level: float
    cells: list[CellSummary]

    @property
    def title(self) -> str:
        return f"{self.load} · {LEVEL_FIELDS.get(self.model, 'level')} {self.level:g}"


def groups(
    summaries: list[CellSummary],
    sort: str = "rps",
    levels: set[float] | None = None,
    servers: set[str] | None = None,
    trim: int = 0,
) -> list[Group]:
    """Cells grouped by load (in study order) and level (ascending), filtered, each group's
    servers sorted best first by `sort` (unmeasured last), the ceiling always first."""
    if sort not in SORTS:
        raise UsageError(f"--sort takes one of {', '.join(SORTS)}, not {sort!r}")
    metric, higher = SORTS[sort]
    how = "trimmed_mean" if trim and metric == "rps_ok" else "median"
    found: dict[tuple[str, float], Group] = {}
    for s in summaries:
        c = s.cell
        if (levels and c.level not in levels) or (servers and c.server not in servers):
            continue
        found.setdefault((c.load, c.level), Group(c.load, c.model, c.level, [])).cells.append(s)
    order = list(dict.fromkeys(s.cell.load for s in summaries))

    def rank(s: CellSummary) -> tuple[int, int, float]:
        value = s.value(metric, how)
        counted = s.cell.status == CellStatus.MEASURED and value is not None
        sign = -1 if higher else 1
        return (s.cell.server != BASELINE, not counted, sign * (value or 0.0))

    for group in found.values():
        group.cells.sort(key=rank)
    return sorted(found.values(), key=lambda g: (order.index(g.load), g.level))


def unmatched(
    summaries: list[CellSummary], levels: set[float] | None, servers: set[str] | None, where: str
) -> None:
    """A --server or --level that matches no cell is an error naming the nearest one there."""
    names = {s.cell.server for s in summaries}
    for name in sorted((servers or set()) - names):
        raise no_match("server", name, sorted(names), where)
    there = {s.cell.level for s in summaries}
    for level in sorted((levels or set()) - there):
        levels_there = (f"{lv:g}" for lv in sorted(there))
        raise no_match("level", f"{level:g}", levels_there, where, nearest=False)


def tool_rates(store: Store, summaries: list[CellSummary]) -> dict[int, dict[str, float | None]]:
    """Each cell's median over its repeats of the error rate each tool of TOOL_COLUMNS would have
    counted, read from the stored engine results and the cell's behaviour check."""
    out = {}
    for s in summaries:
        results = [r.engine for r in store.stored_repeats(s.cell.id)]
        out[s.cell.id] = {
            tool: median_rate(results, s.cell.capabilities, tool) for tool in TOOL_COLUMNS.values()
        }
    return out


@dataclass(frozen=True)
class Rows:
    """How `show` turns each cell into a row: the statistic (trim), --wide, and the tools' error
    rates by cell id (read only for --wide)."""

    trim: int
    wide: bool
    tools: dict[int, dict[str, float | None]]
    # loads with several request kinds: each cell's figures per kind (cli/kinds_table.py)
    kinds: dict[int, list[KindFigures]] = field(default_factory=dict)

    def __call__(self, s: CellSummary) -> dict[str, str]:
        return row(s, self.trim, self.wide, self.tools.get(s.cell.id))

    def cells(self, group: Group) -> list[tuple[str, int]]:
        return [(s.cell.server, s.cell.id) for s in group.cells]

    def values(self, s: CellSummary) -> dict[str, Any]:
        """The cell as numbers (JSON, CSV)."""
        return cell_values(s, self.trim, self.wide, self.tools.get(s.cell.id))

    def kind_values(self, group: Group) -> list[dict[str, Any]]:
        return [
            kind_values(s.cell.server, group.load, group.level, k)
            for s in group.cells
            for k in self.kinds.get(s.cell.id, ())
        ]


def show(
    store: Store,
    console: Console,
    study_id: int | None = None,
    *,
    sort: str = "rps",
    levels: set[float] | None = None,
    servers: set[str] | None = None,
    wide: bool = False,
    fmt: str = "table",
    steps: bool = False,
) -> None:
    """A stored study's tables in `fmt`: the cells per load and level, per request kind, each
    capacity load's capacities (and its steps: always in JSON and CSV, with `steps` elsewhere),
    the tuning it was a round of and the verdicts against its seed."""
    study = store.study(study_id)
    config = json.loads(study["config_json"])
    env = json.loads(study["environment_json"])
    trim = int(config.get("trim", 0))
    summaries = summarise_study(store, study["id"], trim)
    unmatched(summaries, levels, servers, f"study {study['id']} ({study['name']}) of {store.path}")
    found = groups(summaries, sort, levels, servers, trim)
    searched = capacity_loads(config)
    more = More(store, study["id"], study["name"], bool(searched), steps)
    shown_ids = [s.cell.id for g in found for s in g.cells]
    kinds = figures_by_cell(store, shown_ids)
    rows = Rows(trim, wide, tool_rates(store, summaries) if wide else {}, kinds)
    if fmt in ("json", "csv"):
        tables = Tables({k: study[k] for k in ("id", "name", "status")})
        tables.add("cells", [rows.values(s) for g in found for s in g.cells])
        tables.add("kinds", [r for g in found for r in rows.kind_values(g)])
        more.into(tables)
        text = tables.as_json() if fmt == "json" else tables.as_csv()
        console.out(text, highlight=False, end="\n" if fmt == "json" else "")
        return
    # a capacity load's steps are no levels of a sweep: its capacity table (and --steps) instead
    found = [g for g in found if g.load not in searched]
    if fmt == "md":
        console.out("\n".join([*_markdown(found, rows), *more.markdown()]), highlight=False)
        return
    _tables(console, study, env, found, summaries, rows)
    more.print(console, terminal_width(console))


def _markdown(found: list[Group], make: Rows) -> list[str]:
    lines = []
    for g in found:
        rows = [make(s) for s in g.cells]
        heads = list(rows[0])
        lines += [
            f"### {g.title}",
            "",
            "| " + " | ".join(heads) + " |",
            "|" + "|".join("---" for _ in heads) + "|",
        ]
        lines += ["| " + " | ".join(r[h].replace("|", "\\|") for h in heads) + " |" for r in rows]
        lines.append("")
        lines += markdown_kinds(g.title, make.cells(g), make.kinds)
    return lines


def _tables(
    console: Console,
    study: Any,
    env: dict[str, Any],
    found: list[Group],
    summaries: list[CellSummary],
    make: Rows,
) -> None:
    wide = make.wide
    width = terminal_width(console)
    console.print(
        f"[bold]study {study['id']}: {study['name']}[/] ({study['status']}) — "
        f"{env.get('cpu_model')} × {env.get('cpu_count')}, kernel {env.get('kernel')}, "
        f"engine {env.get('engine', {}).get('engine_version')}, "
        f"wsgibench {env.get('wsgibench_version')}",
        width=width,
    )
    console.print(f"CPU layout: {layout_text(env)}", highlight=False, width=width)
    for part in app_parts(json.loads(study["config_json"])):  # one's own app, its requests
        console.print(part, highlight=False, width=width)
    if load_hosts_text(env):
        console.print(f"load: {load_hosts_text(env)}", highlight=False, width=width)
    fitted = terminal_width(console)
    for g in found:
        print_table(console, g.title, [make(s) for s in g.cells], SHOW_LAYOUT, fitted)
        print_kinds(console, g.title, make.cells(g), make.kinds, fitted)
        if wide:  # what the app answered wrongly, quoted
            print_quoted(console, g.cells, width)
        else:  # why a server has no clean number here, in a line of its own
            for s in g.cells:
                if s.cell.status != CellStatus.MEASURED and s.cell.reason:
                    console.print(
                        f"  {s.cell.server}: {s.cell.status}: {s.cell.reason}",
                        width=width,
                        highlight=False,
                        markup=False,
                    )
    _footer(console, found, summaries, make.trim, width)
    if wide:
        columns = ", ".join(TOOL_COLUMNS)
        tools = " and ".join(f"{t} ({seeds_text(t)})" for t in TOOL_COLUMNS.values())
        console.print(
            f"errors: ours, the headline. {columns}: the errors {tools} would have counted on "
            "the same requests, by their own rules (a server close they would have met is one "
            "error more), median over the repeats (docs/measurement.md).",
            width=width,
            highlight=False,
        )


def _footer(
    console: Console, found: list[Group], summaries: list[CellSummary], trim: int, width: int | None
) -> None:
    stat = "trimmed mean" if trim else "median"
    console.print(
        f"req/s: the {stat} of the repeats over the measured window; cv '!' above 5 %; "
        "latency: the median over repeats of each repeat's percentile, every request kind, every "
        "request sent (a failed one at the time it failed; ≥: the figure falls on failed requests "
        "and is a lower bound; --wide shows the complete replies' own).",
        width=width,
        highlight=False,
    )
    old = [s for s in summaries if s.replies_only]
    if old:
        console.print(
            f"[yellow]{len(old)} of {len(summaries)} cells were stored before failed requests "
            "were timed[/]: their latency covers complete replies only and leaves failures out.",
            width=width,
        )
    used = {t for g in found for s in g.cells for t in row(s, trim, False)["tags"].split()}
    legend = {**{v: k for k, v in TAGS.items()}, **{v: k for k, v in STATUS_TAGS.items()}}
    if used:
        said = ", ".join(f"{t} = {legend.get(t, t)}" for t in sorted(used))
        console.print(
            f"tags: {said} (full notes: --wide; docs/measurement.md)", width=width, highlight=False
        )
    contended = [
        s
        for s in summaries
        if s.cell.status == CellStatus.CONTENDED
        or any(d["code"] == "contended" for d in s.cell.diagnoses)
    ]
    if contended:
        cells = "cell" if len(summaries) == 1 else "cells"
        were = "was" if len(contended) == 1 else "were"
        console.print(
            f"[yellow]{len(contended)} of {len(summaries)} {cells} {were} contended[/]: other work "
            "took part of their CPUs (see their notes); their numbers are not ranked.",
            width=width,
        )
