"""`wsgibench traffic LOG`: the traffic model an access log makes, as a replay would send it: its
kinds and shares, what is left out and why, the lines that did not read, and the rate over time
with its peak and burstiness."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from wsgibench.cli.kit import console, friendly
from wsgibench.errors import UsageError
from wsgibench.traffic.model import DEFAULT_MAX_KINDS, TrafficModel

# The rate over time in one line of at most this many characters, each the busiest second it
# stands for (so a burst never averages away).
SPARK_WIDTH = 60
_BARS = " ▁▂▃▄▅▆▇█"


@click.command("traffic")
@click.argument("log", type=click.Path(path_type=Path))
@click.option("--format", "fmt", help="combined, common, gunicorn, json, or a format string.")
@click.option("--group", multiple=True, metavar="PATTERN", help="A path pattern: /items/{id}.")
@click.option("--no-group-auto", is_flag=True, help="Group only by --group patterns.")
@click.option("--body", multiple=True, metavar="KIND=FILE", help='A kind\'s body ("POST /a=x").')
@click.option(
    "--json-field", multiple=True, metavar="PART=NAME", help="JSON lines: a part's field (time=ts)."
)
@click.option("--max-kinds", type=click.IntRange(1, 1000), default=DEFAULT_MAX_KINDS)
@friendly
def traffic_command(
    log: Path,
    fmt: str | None,
    group: tuple[str, ...],
    no_group_auto: bool,
    body: tuple[str, ...],
    json_field: tuple[str, ...],
    max_kinds: int,
) -> None:
    """Print the traffic model of an access log: kinds, shares, rate over time, what is left out."""
    from wsgibench.traffic.grouping import Grouping
    from wsgibench.traffic.model import model_of
    from wsgibench.traffic.read import read_log

    bodies = set()
    for given in body:
        kind, sep, _ = given.rpartition("=")
        if not sep or " /" not in kind:
            raise UsageError(f'--body {given!r}: KIND=FILE, e.g. "POST /orders=order.json"')
        bodies.add(kind)
    fields = dict(_pair(given, "--json-field", "time=ts") for given in json_field)
    if fields and fmt not in (None, "json"):
        raise UsageError("--json-field is for JSON lines (--format json)")
    reading = read_log(
        log, "json" if fields else fmt, Grouping.of(group, not no_group_auto), fields
    )
    show_model(model_of(reading, bodies, max_kinds))


def _pair(given: str, option: str, example: str) -> tuple[str, str]:
    key, sep, value = given.partition("=")
    if not sep or not key or not value:
        raise UsageError(f"{option} {given!r}: KEY=VALUE, e.g. {example}")
    return key, value


def show_model(model: TrafficModel) -> None:
    console.print(_head(model), highlight=False, soft_wrap=True)
    for lineno, line, why in model.bad.first:
        console.print(f"  line {lineno}: {escape(why)}: {escape(line[:100])}", highlight=False)
    console.print(_kinds(model))
    if model.left_out:
        table = Table(title="left out", title_justify="left")
        for col, justify in (("what", "left"), ("requests", "right"), ("why", "left")):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for x in model.left_out:
            table.add_row(escape(x.what), f"{x.requests:,}", escape(x.why))
        console.print(table)
    for line in _rate_lines(model):
        console.print(line, highlight=False)


def _head(model: TrafficModel) -> str:
    bad = model.bad.count
    said = f", {bad:,} line{'s' if bad != 1 else ''} not read" + (": the first" if bad else "")
    replayed = f"{model.requests:,} replayed" if model.requests != model.parsed else "all replayed"
    return (
        f"{escape(str(model.path))}: {model.lines:,} lines ({escape(model.format)}), "
        f"{model.parsed:,} requests read ({replayed}){said}"
    )


def _kinds(model: TrafficModel) -> Table:
    table = Table(title=f"{len(model.kinds)} kinds", title_justify="left")
    for col in ("kind", "requests", "share", "sent as", "logged status", "bytes (mean, max)"):
        table.add_column(col, justify="right" if col in ("requests", "share") else "left")
    for k in model.kinds:
        statuses = sorted(k.statuses.items(), key=lambda kv: -kv[1])
        logged = ", ".join(f"{s if s is not None else '-'} ×{n:,}" for s, n in statuses[:3])
        sizes = f"{k.size_mean:,.0f}, {k.size_max:,}" if k.size_mean is not None else "-"
        table.add_row(
            escape(k.name),
            f"{k.count:,}",
            f"{k.share:.1%}",
            escape(k.example),
            logged + (" …" if len(statuses) > 3 else ""),
            sizes,
        )
    return table


def _rate_lines(model: TrafficModel) -> list[str]:
    rate = model.rate()
    start = datetime.fromtimestamp(model.start_s, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return [
        f"rate (of the requests replayed) over {model.span_s:,} s from {start}: mean {rate.mean:,.1f} req/s, "
        f"peak {rate.peak:,} req/s in second {rate.peak_at:,}, burstiness (peak / mean) "
        f"{rate.burstiness:.2f}, variation of the seconds (cv) {rate.cv:.2f}",
        f"req/s  {sparkline(model.per_second)}  (0 … {rate.peak:,}; {_per_column(model.span_s)})",
    ]


def sparkline(seconds: list[int], width: int = SPARK_WIDTH) -> str:
    """The seconds' counts as bars, each bar the busiest of the seconds it stands for."""
    if not seconds:
        return ""
    step = -(-len(seconds) // width)
    peaks = [max(seconds[i : i + step]) for i in range(0, len(seconds), step)]
    top = max(peaks) or 1
    return "".join(_BARS[round(p / top * (len(_BARS) - 1))] for p in peaks)


def _per_column(span_s: int) -> str:
    step = -(-span_s // SPARK_WIDTH)
    return "a bar a second" if step == 1 else f"a bar the busiest of {step} s"
