"""The report's quoted wrong replies: per cell, the first wrong reply of each error class per
request kind (status, head, first body bytes, what was wrong), the app's bytes shown as text:
escaped for HTML, every control character written as an escape."""

from __future__ import annotations

import html

from wsgibench.report.data import ReportData
from wsgibench.results.wrong_replies import BODY_KEEP, HEAD_KEEP, WrongReply, escaped

INTRO = (
    f"The first wrong reply of each error class per request kind of each cell, as the server "
    f"sent it: its head (at most {HEAD_KEEP:,} bytes) and the bytes after it (at most "
    f"{BODY_KEEP} bytes, chunk framing included), with what was wrong; the app's bytes shown as "
    "text, every control character as an escape."
)


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def quoted(w: WrongReply) -> str:
    """A wrong reply's head and body as text lines, every part escaped (not yet for HTML)."""
    lines: list[str] = []
    if w.head is not None:
        head = w.head.split("\r\n")
        while head and not head[-1]:
            head.pop()
        lines += [escaped(line) for line in head]
        lines += ["… (head cut)"] if w.head_cut else []
    if w.body is not None:
        lines += ["", escaped(w.body) + (" … (cut)" if w.body_cut else "")]
    return "\n".join(lines) or "(its bytes were not kept: status and reason only)"


def html_section(data: ReportData) -> str:
    """Every cell's quoted wrong replies, one collapsed entry each; "" when none was wrong."""
    items = []
    for load in data.loads:
        for c in sorted(load.cells, key=lambda c: (c.cell.server, c.cell.level)):
            for w in c.summary.wrong_replies:
                where = f"{c.cell.server} · {load.name} {c.cell.level:g}"
                summary = f"{where}: {escaped(w.summary())} (status {w.status})"
                items.append(
                    f"<details><summary>{_e(summary)}</summary>"
                    f"<pre class=quoted>{_e(quoted(w))}</pre></details>"
                )
    if not items:
        return ""
    return (
        f"<h2 id=wrong-replies>Wrong replies, quoted</h2><p class=meta>{_e(INTRO)}</p>"
        + "".join(items)
    )


def markdown_lines(data: ReportData) -> list[str]:
    """The same in Markdown: a line per reply, its bytes in an indented block."""
    lines: list[str] = []
    for load in data.loads:
        for c in sorted(load.cells, key=lambda c: (c.cell.server, c.cell.level)):
            for w in c.summary.wrong_replies:
                where = f"{c.cell.server} · {load.name} {c.cell.level:g}"
                said = _e(escaped(w.summary()))  # no markup of the app's in the Markdown either
                lines += [f"- {where}: {said} (status {w.status})", ""]
                lines += ["      " + line for line in quoted(w).splitlines()] + [""]
    return ["### Wrong replies, quoted", "", INTRO, "", *lines] if lines else []
