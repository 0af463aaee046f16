"""The HTML report's sections beside the load tables: against the seed, the frameworks, a tuning,
and the environment with every version the study recorded."""

from __future__ import annotations

import html
import json
from typing import Any

from wsgibench.report import format as fmt
from wsgibench.report import frameworks
from wsgibench.report.data import ReportData
from wsgibench.report.seed import against_seed, note
from wsgibench.report.vega import versions
from wsgibench.results.summary import layout_text, load_hosts_text


def e(text: object) -> str:
    return html.escape(str(text), quote=True)


def caption(what: str) -> str:
    """A table's caption: what it is (the study, machine and versions are said once, above)."""
    return f"<caption><b>{e(what)}</b></caption>"


def against_the_seed(data: ReportData) -> str:
    section = against_seed(data)
    if section is None:
        return ""
    seed = section.seed
    head = "".join(
        f"<th>{h}</th>" for h in ("claim", "the seed says", "the seed", "here", "verdict", "why")
    )
    rows = "".join(
        f"<tr><td class=l>{e(v.claim.what)}"
        + (f"<br><small>{e(note(v))}</small>" if note(v) else "")
        + f"</td><td class=l>{e(v.claim.quoted)}</td>"
        f"<td>{e(v.theirs)}</td><td class=l>{e(v.ours)}</td>"
        f"<td class=l><b>{e(v.verdict)}</b></td><td class=l>{e(v.sentence)}</td></tr>"
        for v in section.verdicts
    )
    apart = "".join(f"<li>{e(d)}</li>" for d in section.deviations)
    releases = "".join(f"<li>{e(line)}</li>" for line in section.releases)
    unjudged = "".join(f"<li>line {n.line}: {e(n.reason)}</li>" for n in section.not_claimed)
    return (
        f"<h2 id=against-seed>Against the seed</h2><p class=meta>seed {e(seed.seed)} "
        f"({e(seed.file)}): {e(seed.title)}. {e(section.tally())}; errors counted as "
        f"{e(seed.counting)} counted them where a claim is about errors; the rules: "
        "docs/seed-verdicts.md</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        + (
            f"<p>What the seed states that no claim here judges, and why:</p><ul>{unjudged}</ul>"
            if unjudged
            else ""
        )
        + (f"<p>The seed's releases beside today's:</p><ul>{releases}</ul>" if releases else "")
        + (
            f"<p>What this study does differently from the seed:</p><ul>{apart}</ul>"
            if apart
            else ""
        )
    )


def _framework_rows(sec: frameworks.FrameworkSection) -> str:
    rows = "".join(
        f"<tr><td>{i}</td><td class=l>{e(r.server)}</td><td class=l>{e(r.interface)}</td>"
        f"<td>{fmt.rps(r.rps)}</td><td>{fmt.rps(r.low)}–{fmt.rps(r.high)}</td>"
        + (
            f"<td>{fmt.rps(r.ceiling)}</td><td>{r.share:.0%}</td>"
            if r.ceiling and r.share is not None
            else f"<td class=l colspan=2>none: {e(r.no_ceiling)}</td>"
        )
        + f"<td>{f'{r.reply_bytes:,.0f}' if r.reply_bytes else '-'}</td></tr>"
        for i, r in enumerate(sec.rows, 1)
    )
    rows += "".join(
        f"<tr><td>-</td><td class=l>{e(u.server)}</td><td class=l colspan=7>"
        f"<span class=bad>not ranked: {e(u.status)}</span>{e(': ' + u.reason if u.reason else '')}"
        "</td></tr>"
        for u in sec.unranked
    )
    return rows


def framework_sections(data: ReportData, chart: str = "") -> str:
    """Per framework: its servers ranked, each one's share of its own ceiling (or why it has
    none), then the servers not ranked with their reasons; `chart` (every framework on one chart)
    first."""
    found = frameworks.sections(data)
    if not found:
        return ""
    parts = [
        "<h2 id=frameworks>Frameworks on servers</h2><p class=meta>Each framework's servers, best "
        "first, then those not ranked with their reasons; the ceiling is the same server on the "
        'load the study declares its ceiling (role = "ceiling"), at the same level, so the '
        "share says how much of each request the framework takes.</p>",
        chart,
    ]
    for sec in found:
        parts.append(
            f"<h3>{e(sec.framework)} — {e(sec.level_field)} {sec.level:g}</h3>"
            "<table><tr><th>#</th><th class=l>server</th><th class=l>interface</th><th>req/s</th>"
            "<th>repeats</th><th>ceiling</th><th>share</th><th>bytes/reply</th></tr>"
            f"{_framework_rows(sec)}</table><p>{e(sec.finding)}</p>"
        )
    return "".join(parts)


def tuning(data: ReportData) -> str:
    """A tuning's trials ranked (the last round first) and the winner's command line."""
    record = data.tuning
    if record is None:
        return ""
    rows = "".join(
        f"<tr><td>{i}</td><td>{e(t.setting)}</td><td>{t.round}</td>"
        f"<td class=num>{e(t.shown_capacity)}</td>"
        f"<td class=num>{f'{t.above:,.0f}' if t.above else '?'}</td>"
        f"<td class=num>{f'{t.cpu_us:,.0f}' if t.cpu_us else '-'}</td><td>{e(t.note)}</td></tr>"
        for i, t in enumerate(record.ranked(), 1)
    )
    best = (
        f"<p>Best: {e(record.winner)}: <code>{e(record.command)}</code></p>"
        if record.winner
        else "<p>No setting met the budget.</p>"
    )
    trends = "".join(f"<p>{e(line)}</p>" for line in record.trends)
    return (
        f"<h2>Tuning {e(record.label)} within {e(record.budget)}</h2>"
        "<table><tr><th>#</th><th>setting</th><th>round</th><th>capacity req/s</th>"
        f"<th>missed at</th><th>CPU µs/req</th><th>note</th></tr>{rows}</table>{trends}{best}"
        f"<p class=meta>Stopped: {e(record.stopped)}; studies "
        f"{', '.join(map(str, record.studies))} hold the trials.</p>"
    )


def _engine(env: dict[str, Any]) -> str:
    engine = dict(env.get("engine") or {})
    if not engine:
        return "not recorded"
    version = engine.pop("engine_version", None) or "version not recorded"
    said = [f"{k.removesuffix('_version').replace('_', ' ')} {v}" for k, v in engine.items()]
    return f"{version}" + (f" ({', '.join(said)})" if said else "")


def _binaries(env: dict[str, Any]) -> list[tuple[str, str]]:
    """Each system binary whose version the study recorded (nginx_version, apache_version):
    only those its servers needed, and a binary that did not say its version said so."""
    return [
        (
            key.removesuffix("_version"),
            str(value) if value else "needed by a server, but it did not say its version",
        )
        for key, value in sorted(env.items())
        if key.endswith("_version") and key != "wsgibench_version"
    ]


def _servers(data: ReportData) -> str:
    found: dict[str, str] = {}
    for load in data.loads:
        for c in load.cells:
            if c.summary.version and c.cell.server not in found:
                found[c.cell.server] = c.summary.version
    return ", ".join(f"{s} {v}" for s, v in sorted(found.items()))


def environment(data: ReportData) -> str:
    env = data.meta.environment
    usable = env.get("cpus_usable")
    rows: list[tuple[str, object]] = [
        (
            "study",
            f"#{data.meta.id} {data.meta.name} ({data.meta.status}), started {data.meta.date}",
        ),
        (
            "CPU",
            f"{env.get('cpu_model')} × {env.get('cpu_count')}"
            + (f" (usable {usable})" if usable else ""),
        ),
        ("memory", fmt.mib(env.get("memory_bytes")) + " MiB" if env.get("memory_bytes") else None),
        ("kernel / OS", f"{env.get('kernel')} / {env.get('os')}"),
        ("CPU layout", layout_text(env) if "server_cpus" in env else None),
        ("load hosts", load_hosts_text(env) or "this machine's engine"),
        ("engine", _engine(env)),
        (
            "wsgibench",
            f"{env.get('wsgibench_version')}"
            + (f" (git {env['git_commit']})" if env.get("git_commit") else ""),
        ),
        ("python", env.get("python")),
        *_binaries(env),
        ("servers", _servers(data) or None),
        ("sysctls", ", ".join(f"{k}={v}" for k, v in (env.get("sysctls") or {}).items()) or None),
        ("charts", ", ".join(f"{k} {v}" for k, v in versions().items())),
    ]
    body = "".join(f"<tr><th class=l>{e(k)}</th><td class=l>{e(v)}</td></tr>" for k, v in rows if v)
    return f"<table>{caption('Environment')}{body}</table>"


def as_json(value: object) -> str:
    """JSON for a <script> element: no string inside it can close the element."""
    return json.dumps(value).replace("<", "\\u003c")
