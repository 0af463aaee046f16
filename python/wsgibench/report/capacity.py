"""A capacity load in the report (HTML and Markdown): per server its capacity within the latency
budget, best first, with the interval it lies in, where errors start, its CPU per request and
memory, and why its search stopped; then the search's steps, one compact line per server.

A capacity load's cells are the steps of a search (each at a rate the search chose) and the cells
at a share of the capacity for CPU per request: as levels of a sweep they would fill the per-level
tables and findings with one-server levels. So the load has this section instead, each step is a
mark on its server's line (hover: the cell and the verdict), and every cell keeps its row in the
cell details."""

from __future__ import annotations

import html
from dataclasses import dataclass

from wsgibench.report import format as fmt
from wsgibench.report.data import LoadData, ReportData
from wsgibench.results.capacity import COST_NOTE, StepStatus
from wsgibench.results.capacity_read import ServerCapacity

HEADERS = (
    "server",
    "capacity req/s",
    "interval req/s",
    "errors from req/s",
    "CPU µs/request at 50 %",
    "CPU µs/request at 100 %",
    "MiB at 100 %",
    "workers",
    "why the search stopped",
)
# A replay's search is of the speed: its columns in multiples of the log's pace.
REPLAY_HEADERS = (
    "server",
    "capacity (× the log)",
    "interval",
    "errors from",
    *HEADERS[4:],
)


def headers(found: list[ServerCapacity]) -> tuple[str, ...]:
    return REPLAY_HEADERS if found and found[0].replay else HEADERS


def amount(c: ServerCapacity, rate: float | None) -> str:
    """A step's rate as the table gives it: requests/s, or a replay's speed ("3.4×")."""
    if rate is None:
        return "-"
    return f"{rate:.3g}×" if c.replay else fmt.rps(c.requests(rate))


def holds(found: list[ServerCapacity]) -> str:
    """A replay's capacities in a sentence: "bjoern holds the traffic up to 3.4× within p99 ≤
    50 ms; waitress 1.2×" ("" for a rate's search, or when none was found)."""
    known = [c for c in found if c.replay and c.result.capacity is not None]
    if not known:
        return ""
    first, rest = known[0], known[1:]
    said = (
        f"{first.server} holds the traffic up to {amount(first, first.result.capacity)} "
        f"within {first.budget.describe()}"
    )
    return "; ".join([said, *(f"{c.server} {amount(c, c.result.capacity)}" for c in rest)])


# A step's verdict in one character (✓ its repeats within the budget together).
MARKS = {StepStatus.MET: "✓", StepStatus.MISSED: "✗", StepStatus.INVALID: "?"}
LEGEND = "✓ met the budget over its repeats, ✗ missed it, ? invalid (the engine limited it)"


@dataclass(frozen=True)
class CapacityRow:
    """One server's line of the capacity table, as text."""

    server: str
    capacity: str
    interval: str
    errors_from: str
    cpu_half: str
    cpu_full: str
    mib: str
    workers: str
    stopped: str
    proof: int | None  # the cell of the capacity step

    def cells(self) -> list[str]:
        return [
            self.server,
            self.capacity,
            self.interval,
            self.errors_from,
            self.cpu_half,
            self.cpu_full,
            self.mib,
            self.workers,
            self.stopped,
        ]


def micros(value: float | None) -> str:
    """CPU µs per request: three significant digits below 100, whole above."""
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def interval(c: ServerCapacity) -> str:
    """Where the capacity lies, in requests/s: from the highest rate that met the budget to the
    lowest above it that missed (no miss above: at least; nothing met: below the lowest tried)."""
    r = c.result
    if r.capacity is None:
        return f"< {amount(c, r.above)}" if r.above else "-"
    if r.above is None:
        return f"≥ {amount(c, r.capacity)}"
    return f"{amount(c, r.capacity)}–{amount(c, r.above)}"


def stopped(c: ServerCapacity) -> str:
    """Why the search stopped, the steps it ran again, and whether the server tipped; an invalid
    step's rate in requests/s, as every rate here."""
    r = c.result
    step = r.stopping
    said = r.stopped
    if step is not None:
        said = f"invalid at {_at(c, step.rate)}: {step.reason}"
    if r.rerun:
        again = [r.steps[i] for i in r.rerun]
        at = " and ".join(_at(c, s.rate) for s in again)
        said += f"; run again after the machine limited it: the step at {at} ({again[0].reason})"
    tip = r.tipped(c.unit_rps or c.calls)
    if tip is None or tip.served is None:
        return said
    met = c.requests(r.capacity) or 1.0
    return (
        f"{said}; tipped: offered {fmt.rps(c.requests(tip.rate))} req/s"
        + (f" ({amount(c, tip.rate)})" if c.replay else "")
        + " it served "
        f"{fmt.rps(tip.served)}, {1 - tip.served / met:.0%} less than the {fmt.rps(met)} it met "
        "(once behind it falls further: its capacity can move between runs)"
    )


def _at(c: ServerCapacity, rate: float) -> str:
    return amount(c, rate) if c.replay else f"{amount(c, rate)} req/s"


def row(c: ServerCapacity) -> CapacityRow:
    r = c.result
    half, full = c.cost_at(0.5), c.cost_at(1.0)
    found = amount(c, r.capacity)
    if c.replay and r.capacity is not None:
        found += f" ({fmt.rps(c.requests(r.capacity))} req/s)"
    return CapacityRow(
        c.server,
        found,
        interval(c),
        amount(c, r.error_onset),
        micros(half.cpu_us_per_request if half else None),
        micros(full.cpu_us_per_request if full else None),
        f"{full.rss_mib:.1f}" if full and full.rss_mib else "-",
        str(c.workers or "-"),
        stopped(c),
        r.proof,
    )


@dataclass(frozen=True)
class StepMark:
    text: str  # "4,000 ✓": the offered requests/s and the verdict
    title: str  # the cell and why


def steps(c: ServerCapacity) -> list[StepMark]:
    """The server's steps in the order they ran."""
    return [
        StepMark(
            f"{amount(c, s.rate)} {MARKS[s.status]}",
            f"{_cell(s.cell_id)}: {s.status.value}, {s.reason}"
            + ("; run again at once" if i in c.result.rerun else ""),
        )
        for i, s in enumerate(c.result.steps)
    ]


def _cell(cell_id: int | None) -> str:
    """A step's cell; a step run again gave its cell to the rerun (the note there says it)."""
    return f"cell {cell_id}" if cell_id is not None else "first run (its cell now the rerun's)"


def cost_cells(load: LoadData, server: str) -> list[int]:
    """The cells run at a share of the capacity for CPU per request (not steps of the search)."""
    return sorted(
        c.cell.id for c in load.cells if c.cell.server == server and COST_NOTE in c.cell.notes
    )


def what(load: LoadData, found: list[ServerCapacity]) -> str:
    """What the table says, in words (its caption)."""
    budget = found[0].budget.describe() if found else "the budget"
    if found and found[0].replay:
        return (
            f"Capacity — load {load.name}: the highest speed of the log's traffic (2× = the same "
            f"requests in half the time) whose repeats together kept {budget} (corrected latency, "
            "open loop), with its mean requests/s; the interval runs from it to the lowest speed "
            "above it that missed; errors from: the lowest speed with any error; CPU per valid "
            "reply of the server's process tree at 50 % and 100 % of the capacity, peak RSS at "
            "it; best first"
        )
    calls = found[0].calls if found else 1
    per = f"{calls} requests per connection, " if calls > 1 else ""
    return (
        f"Capacity — load {load.name}: the highest offered rate whose repeats together kept "
        f"{budget} (corrected latency, open loop, {per}rates in requests/s); the interval runs "
        "from it to the lowest rate above it that missed; errors from: the lowest rate with any "
        "error; CPU per valid reply of the server's process tree at 50 % and 100 % of the "
        "capacity, peak RSS at it; best first"
    )


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def html_section(data: ReportData, load: LoadData) -> str:
    """The load's heading, its capacity table, and its steps (folded)."""
    found = data.capacities_of(load.name)
    head = "".join(
        f"<th{' class=l' if h in ('server', 'why the search stopped') else ''}>{_e(h)}</th>"
        for h in headers(found)
    )
    body = []
    for r in map(row, found):
        tip = f' title="cell {r.proof}"' if r.proof is not None else ""
        body.append(
            f"<tr><td class=l>{_e(r.server)}</td><td{tip}>{_e(r.capacity)}</td>"
            + "".join(f"<td>{_e(v)}</td>" for v in r.cells()[2:8])
            + f"<td class=l>{_e(r.stopped)}</td></tr>"
        )
    budget = found[0].budget.describe() if found else ""
    return (
        f"<h2>Load “{_e(load.name)}” — capacity within {_e(budget)}</h2>"
        + (f"<p>{_e(holds(found))}.</p>" if holds(found) else "")
        + f"<table class=capacity><caption><b>{_e(what(load, found))}</b></caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        + _html_steps(load, found)
    )


def _html_steps(load: LoadData, found: list[ServerCapacity]) -> str:
    rows = []
    for c in found:
        marks = " → ".join(f'<span title="{_e(m.title)}">{_e(m.text)}</span>' for m in steps(c))
        costs = fmt.ids(cost_cells(load, c.server))
        rows.append(
            f"<tr><td class=l>{_e(c.server)}</td><td class=l>{marks}</td>"
            f"<td class=l><span class=ids>{_e(costs)}</span></td></tr>"
        )
    count = sum(len(c.result.steps) for c in found)
    return (
        f"<details class=capacity-steps><summary>The {count} steps of the search, in the order "
        f"they ran ({'speeds' if found and found[0].replay else 'offered requests/s'}; "
        f"{_e(LEGEND)}; hover a step for its cell)</summary>"
        "<table><tr><th class=l>server</th><th class=l>steps</th>"
        f"<th class=l>CPU cost cells</th></tr>{''.join(rows)}</table></details>"
    )


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_section(data: ReportData, load: LoadData) -> list[str]:
    """The load's heading, its capacity table, and one line of steps per server."""
    found = data.capacities_of(load.name)
    budget = found[0].budget.describe() if found else ""
    lines = [
        f"### Load `{load.name}` — capacity within {budget}",
        "",
        *([holds(found) + ".", ""] if holds(found) else []),
        "| " + " | ".join(headers(found)) + " |",
        "|---|" + "---:|" * (len(HEADERS) - 2) + "---|",
    ]
    lines += ["| " + " | ".join(_md(v) for v in row(c).cells()) + " |" for c in found]
    unit = "speeds" if found and found[0].replay else "requests/s"
    lines += ["", what(load, found) + ".", "", f"Steps of the search ({unit}; {LEGEND}):", ""]
    for c in found:
        marks = " · ".join(m.text for m in steps(c))
        ids = fmt.ids([s.cell_id for s in c.result.steps if s.cell_id is not None])
        costs = fmt.ids(cost_cells(load, c.server))
        lines.append(f"- {c.server}: {marks} (cells {ids}; CPU cost cells {costs})")
    return [*lines, ""]
