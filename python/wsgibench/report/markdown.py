"""The Markdown summary: tables, winners and chart images, ready for a README or a blog post."""

from __future__ import annotations

from wsgibench.report import capacity, kinds, quoted
from wsgibench.report import format as fmt
from wsgibench.report.chart_parts import Chart
from wsgibench.report.data import ReportData
from wsgibench.report.findings import findings
from wsgibench.report.seed import against_seed, note, sentence
from wsgibench.report.table import COLUMNS, LoadTable, ServerRow, untested_notes


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _entry(row: ServerRow, key: str) -> str:
    e = row.entries.get(key)
    if e is None:
        return "-"
    metric = next(m for m in COLUMNS if m.key == key)
    where = f" @{fmt.level(e.level)}" if key == "throughput" else ""
    mark = " ⚠" if e.disputed else ""
    return f"{metric.text(e.median)}{where}{mark} ({metric.text(e.low)}–{metric.text(e.high)})"


def table(data: ReportData, t: LoadTable) -> list[str]:
    load = t.load
    ref = fmt.level(t.reference_level) if t.reference_level is not None else "-"
    titles = [m.title.replace("reference load", f"{load.level_field} {ref}") for m in COLUMNS]
    lines = [
        f"### Load `{load.name}` — {load.describe()}",
        "",
        "| server | interface | flavour | version | "
        + " | ".join(titles)
        + " | behaviour | status | cell ids |",
        "|---|---|---|---|" + "---:|" * len(COLUMNS) + "---|---|---|",
    ]
    for row in t.rows:
        cells = [
            row.server,
            row.interface or "-",
            row.flavour or "-",
            row.version or "-",
            *(_entry(row, m.key) for m in COLUMNS),
            fmt.caps(row.capabilities),
            row.status,
            fmt.ids(row.cell_ids),
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += [
        "",
        "Values are the median of the repeats with their min–max range; "
        "record ids let you find every number in the results store; ⚠ marks a number a "
        "diagnosis disputes, which is never ranked. The wrk and httperf columns are the errors "
        "those tools would have counted on the same requests (docs/measurement.md): shown beside "
        "ours, never ranked.",
        "",
        "**Winners** (the nginx baseline is the machine's ceiling and competes with none):",
        "",
    ]
    notes = untested_notes(t.winners)
    for w in t.winners:
        said = w.tie_text(notes.get(w.untested, ""))
        tie = f" — {said}" if said else ""
        title = w.metric.title.replace("reference load", f"{load.level_field} {ref}")
        lines.append(f"- {title}: **{', '.join(w.labels)}** ({w.value}){tie}{w.unranked_text()}")
    lines += ["", *(f"{mark} {why}" for why, mark in notes.items())]
    lines.append("")
    return lines


def render(data: ReportData, tables: list[LoadTable], charts: list[Chart], chart_dir: str) -> str:
    meta = data.meta
    lines = [f"## wsgibench: {meta.name} (study #{meta.id})", ""]
    if meta.config.get("description"):
        lines += [meta.config["description"], ""]
    lines += [meta.as_run(), ""]
    found = findings(data)
    if found:
        lines += ["### Findings", "", *(f"- {line}" for line in found), ""]
    section = against_seed(data)
    if section is not None:
        seed = section.seed
        lines += [f"### Against the seed (seed {seed.seed}: {seed.title})", "", section.tally(), ""]
        lines += [
            f"- {sentence(v)} The seed: {v.claim.quoted}; {v.theirs}. Here: {v.ours}."
            + (f" {note(v)}" if note(v) else "")
            for v in section.verdicts
        ] + [""]
        if section.not_claimed:
            lines += ["What the seed states that no claim here judges, and why:", ""]
            lines += [f"- line {n.line}: {n.reason}" for n in section.not_claimed] + [""]
        if section.releases:
            lines += ["The seed's releases beside today's:", ""]
            lines += [f"- {line}" for line in section.releases] + [""]
        if section.deviations:
            lines += ["What this study does differently from the seed:", ""]
            lines += [f"- {d}" for d in section.deviations] + [""]
    lines += [
        f"- date: {meta.date}",
        f"- machine: {meta.machine}",
        f"- versions: {meta.versions}",
        f"- repeats per cell: {meta.config.get('repeats', '?')}",
        "",
    ]
    by_load = {t.load.name: t for t in tables}
    for load in data.loads:
        if load.is_capacity:  # its steps are no levels of a sweep: a section of its own
            lines += capacity.markdown_section(data, load)
        elif load.name in by_load:
            lines += table(data, by_load[load.name])
        else:
            continue
        lines += kinds.markdown_section(load)
        lines += [
            line
            for c in charts
            if c.load == load.name
            for line in (f"![{c.title}]({chart_dir}/{c.slug}.png)", "")
        ]
    across = [c for c in charts if not c.load]  # charts of several loads (scaling)
    if across:
        lines += ["## Across loads", ""]
        lines += [line for c in across for line in (f"![{c.title}]({chart_dir}/{c.slug}.png)", "")]
    lines += quoted.markdown_lines(data)
    lines += ["Full interactive report: `report.html` (self-contained, works offline).", ""]
    return "\n".join(lines)
