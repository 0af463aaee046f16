"""`wsgibench show`: a terminal table of a stored study, read only from the store."""

from __future__ import annotations

import json

from rich.console import Console, JustifyMethod
from rich.table import Table

from wsgibench.results.stats import Summary
from wsgibench.results.store import Store
from wsgibench.results.summary import (
    CellSummary,
    layout_text,
    placement_text,
    summarise_study,
)


def _fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit == "ms":
        return f"{value / 1000:.2f}"
    if unit == "MiB":
        return f"{value / 2**20:.1f}"
    if unit == "%":
        return f"{value * 100:.2f}%"
    return f"{value:,.0f}"


def _cv(rps: Summary | None) -> str:
    """The coefficient of variation of req/s; none for a single repeat (there is no spread)."""
    if rps is None:
        return "-"
    if rps.n < 2:
        return "—"
    return f"{rps.cv * 100:.1f}%" + (" !" if rps.noisy else "")


def _caps(caps: dict | None) -> str:
    if not caps:
        return "-"
    marks = [("1.0", "http10"), ("ka", "keep_alive"), ("pipe", "pipelining")]
    return " ".join(label if caps.get(key) else f"no-{label}" for label, key in marks)


COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("server", "left"),
    ("version", "left"),
    ("load", "left"),
    ("level", "right"),
    ("req/s", "right"),
    ("cv", "right"),
    ("p50 ms", "right"),
    ("p99 ms", "right"),
    ("errors", "right"),
    ("cpu %", "right"),
    ("peak MiB", "right"),
    ("behaviour", "left"),
    ("status / notes", "left"),
)


def show(store: Store, console: Console, study_id: int | None = None) -> None:
    study = store.study(study_id)
    config = json.loads(study["config_json"])
    env = json.loads(study["environment_json"])
    trim = int(config.get("trim", 0))
    console.print(
        f"[bold]study {study['id']}: {study['name']}[/] ({study['status']}) — "
        f"{env.get('cpu_model')} × {env.get('cpu_count')}, kernel {env.get('kernel')}, "
        f"engine {env.get('engine', {}).get('engine_version')}, "
        f"wsgibench {env.get('wsgibench_version')}"
    )
    console.print(f"CPU layout: {layout_text(env)}", highlight=False)
    table = Table(show_lines=False)
    for col, justify in COLUMNS:
        table.add_column(col, justify=justify)
    summaries = summarise_study(store, study["id"], trim)
    for s in summaries:
        table.add_row(*_row(s, trim))
    console.print(table)
    _footer(console, summaries, trim)


def _row(s: CellSummary, trim: int) -> list[str]:
    c = s.cell
    status = c.status if c.status == "measured" else f"[red]{c.status}[/]"
    said = [c.reason, placement_text(c.isolation), s.kinds_text(), *c.notes]
    notes = "; ".join(filter(None, [*said, *(d["message"] for d in c.diagnoses)]))
    return [
        c.server,
        s.version or "-",
        c.load,
        f"{c.level:g}",
        _fmt(s.value("rps_ok", "trimmed_mean" if trim else "median")),
        _cv(s.stats["rps_ok"]),
        _fmt(s.value("latency_p50_us"), "ms"),
        _fmt(s.value("latency_p99_us"), "ms"),
        _fmt(s.value("error_rate"), "%"),
        _fmt(s.value("cpu_mean_pct")),
        _fmt(s.value("rss_peak_bytes"), "MiB"),
        _caps(c.capabilities),
        status + (f": {notes}" if notes else ""),
    ]


def _footer(console: Console, summaries: list[CellSummary], trim: int) -> None:
    stat = "trimmed mean" if trim else "median"
    console.print(
        f"req/s is the {stat} of the repeats; cv flagged '!' above 5 %; "
        "latency is the median over repeats of each repeat's percentile."
    )
    contended = [s for s in summaries if any(d["code"] == "contended" for d in s.cell.diagnoses)]
    if contended:
        console.print(
            f"[yellow]{len(contended)} of {len(summaries)} cells were contended[/]: other work "
            "took part of their CPUs (see their notes); their numbers are lower than they would be."
        )
