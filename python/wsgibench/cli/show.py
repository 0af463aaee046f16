"""`wsgibench show`: a stored study as tables, one per load and level, servers best first, the
nginx ceiling on top; within 120 columns with short tags and their legend (`--wide`: full notes);
also as Markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from wsgibench.baseline import BASELINE
from wsgibench.cli.capacity_table import capacity_table
from wsgibench.cli.fit import Layout, print_table, terminal_width
from wsgibench.cli.kinds_table import figures_by_cell, markdown_kinds, print_kinds
from wsgibench.cli.tuning_table import print_tuning
from wsgibench.errors import UsageError
from wsgibench.report.data import app_parts
from wsgibench.report.format import caps_short, cores, cv, kinds, mib, ms, pct, whole
from wsgibench.results.capacity_read import capacity_loads, read_capacities
from wsgibench.results.engine_plan import LEVEL_FIELDS
from wsgibench.results.kind_figures import KindFigures
from wsgibench.results.seed_errors import median_rate, seeds_text
from wsgibench.results.store import Store
from wsgibench.results.summary import (
    CellSummary,
    layout_text,
    load_hosts_text,
    placement_text,
    summarise_study,
)
from wsgibench.results.tuning import tuning_of
from wsgibench.results.verdict import CellStatus

# --sort KEY: (the summary metric, higher is better)
SORTS = {
    "rps": ("rps_ok", True),
    "p50": ("latency_p50_us", False),
    "p99": ("latency_p99_us", False),
    "errors": ("error_rate", False),
    "cpu": ("cpu_mean_pct", False),
    "memory": ("rss_peak_bytes", False),
}
# Diagnosis code -> the short tag `show` prints (the legend below the tables explains each).
TAGS = {
    "engine-saturated": "sat",
    "contended": "busy",
    "littles-law": "little",
    "no-keep-alive": "no-ka",
    "no-pipelining": "no-pipe",
    "listen-overflow": "backlog",
    "nagle": "nagle",
    "logging": "log",
    "waiting": "wait",
    "unannounced-close": "silent-close",
    "closes-after-n": "ka-limit",
}
STATUS_TAGS = {
    CellStatus.DEATHS: "DEATHS",
    CellStatus.CONTENDED: "CONTENDED",
    CellStatus.INVALID: "INVALID",
    CellStatus.DISQUALIFIED: "DQ",
    CellStatus.UNAVAILABLE: "n/a",
    CellStatus.FAILED: "FAIL",
}
# --wide: beside our error rate, the errors the seeds' tools would have counted on the same
# requests (results/seed_errors.py), column -> tool.
TOOL_COLUMNS = {"wrk err": "wrk", "httperf err": "httperf"}
# The key column first, the figures right-aligned, the prose wrapping; the columns in order of
# importance when a table is split to fit the terminal (cli/fit.py).
SHOW_LAYOUT = Layout(
    key="server",
    right=frozenset(
        (
            "req/s",
            "cores",
            "req/CPU-s",
            "cv",
            "p50 ms",
            "p99 ms",
            "replies p99 ms",
            "errors",
            "wrk err",
            "httperf err",
            "cpu %",
            "MiB",
        )
    ),
    prose=frozenset(("tags", "behaviour", "notes")),
    order=("req/s", "p99 ms", "p50 ms", "errors", "cv", "tags", "iface", "version", "cpu %", "MiB"),
)


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


def row(
    s: CellSummary,
    trim: int,
    wide: bool,
    tools: dict[str, float | None] | None = None,
) -> dict[str, str]:
    """One cell as the columns `show` prints (the same in every format); `tools`: the cell's
    error rates as the seeds' tools counted them (--wide shows them beside ours)."""
    c = s.cell
    tags = [STATUS_TAGS[c.status]] if c.status in STATUS_TAGS else []
    tags += [TAGS.get(d["code"], d["code"]) for d in c.diagnoses]
    server = f"▲ {c.server} (ceiling)" if c.server == BASELINE else c.server
    out = {
        "server": server,
        "iface": s.interface_short,
        "version": s.version or "-",
        "req/s": whole(s.value("rps_ok", "trimmed_mean" if trim else "median")),
        # --wide: the server's cores used (its threads' CPU seconds per second) and valid replies
        # per CPU-second of them, beside req/s
        **(
            {"cores": cores(s.value("cores_used")), "req/CPU-s": whole(s.value("per_cpu_s"))}
            if wide
            else {}
        ),
        "cv": cv(s.stats["rps_ok"]),
        "p50 ms": _latency(s, "latency_p50_us"),
        "p99 ms": _latency(s, "latency_p99_us"),
        # --wide: the complete replies' own p99, failures left out
        **({"replies p99 ms": ms(s.value("reply_latency_p99_us"), ".2f")} if wide else {}),
        "errors": pct(s.value("error_rate")),
        **{column: pct((tools or {}).get(tool)) for column, tool in TOOL_COLUMNS.items() if wide},
        "cpu %": whole(s.value("cpu_mean_pct")),
        "MiB": mib(s.value("rss_peak_bytes")),
        "tags": " ".join(dict.fromkeys(tags)),
    }
    if wide:
        said = [c.reason, placement_text(c.isolation), kinds(s.kinds), *c.notes]
        out["behaviour"] = caps_short(c.capabilities)
        out["notes"] = "; ".join(filter(None, [*said, *(d["message"] for d in c.diagnoses)]))
    return out


def _latency(s: CellSummary, metric: str) -> str:
    """A latency in ms; "≥" before it when it falls on failed requests (a lower bound)."""
    text = ms(s.value(metric), ".2f")
    return f"≥{text}" if s.bound(metric) and text != "-" else text


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
) -> None:
    study = store.study(study_id)
    config = json.loads(study["config_json"])
    env = json.loads(study["environment_json"])
    trim = int(config.get("trim", 0))
    summaries = summarise_study(store, study["id"], trim)
    found = groups(summaries, sort, levels, servers, trim)
    searched = capacity_loads(config)
    if fmt == "table" and searched:  # a capacity load: one table of capacities, not its steps
        found = [g for g in found if g.load not in searched]
    shown_ids = [s.cell.id for g in found for s in g.cells]
    kinds = figures_by_cell(store, shown_ids) if fmt in ("table", "md") else {}
    rows = Rows(trim, wide, tool_rates(store, summaries) if wide else {}, kinds)
    writers: dict[str, Callable[[], None]] = {
        "table": lambda: _tables(console, study, env, found, summaries, rows),
        "md": lambda: console.out(_markdown(found, rows), highlight=False),
        "csv": lambda: console.out(_csv(found, rows), highlight=False, end=""),
        "json": lambda: console.out(_json(found, rows), highlight=False),
    }
    writers[fmt]()
    if fmt == "table" and (record := tuning_of(store, study["id"])) is not None:
        print_tuning(console, record)
    if fmt == "table" and searched:
        capacity_table(console, read_capacities(store, study["id"]), terminal_width(console))


def _flat(found: list[Group], rows: Rows) -> list[dict[str, Any]]:
    return [{"load": g.load, "level": g.level, **rows(s)} for g in found for s in g.cells]


def _markdown(found: list[Group], make: Rows) -> str:
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
    return "\n".join(lines)


def _csv(found: list[Group], make: Rows) -> str:
    rows = _flat(found, make)
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return buf.getvalue()


def _json(found: list[Group], rows: Rows) -> str:
    return json.dumps(_flat(found, rows), indent=1)


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
        if not wide:  # why a server has no clean number here, in a line of its own
            for s in g.cells:
                if s.cell.status != CellStatus.MEASURED and s.cell.reason:
                    console.print(
                        f"  {s.cell.server}: {s.cell.status}: {s.cell.reason}",
                        width=width,
                        highlight=False,
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
