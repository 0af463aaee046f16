"""Wrong replies as the engine quotes them: read back bounded, the first of a cell's repeats, and
made safe for a terminal and a page (an app's bytes are data, never markup or a command)."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

from rich.console import Console

from wsgibench.cli.show import show
from wsgibench.report.data import load_report_data
from wsgibench.report.quoted import html_section, markdown_lines
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.merge import _merge_kinds
from wsgibench.results.store import Store
from wsgibench.results.wrong_replies import (
    BODY_KEEP,
    HEAD_KEEP,
    bounded,
    escaped,
    first_of_cell,
    read,
    terminal_lines,
)

from ..synthetic import build_store, engine_result

HOSTILE = "\x1b[2J\x1b]0;owned\x07[bold red]boom[/] <script>alert(1)</script>\u202e"
QUOTE = {
    "error": "bad_body",
    "status": 200,
    "reason": "json items.4.id: got 7, expected 8",
    "head": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n",
    "head_cut": False,
    "body": '{"items": [1, 2, 3, 4, {"id": 7}]}',
    "body_cut": False,
}


def test_a_document_saying_more_than_the_engine_keeps_is_cut_to_the_bounds():
    long = {**QUOTE, "head": "h" * (HEAD_KEEP + 10), "body": "b" * 5000, "reason": "r" * 9000}
    (kept,) = bounded([long, {**long, "reason": "a second bad_body"}, "not an entry"])
    assert len(kept["head"]) == HEAD_KEEP and kept["head_cut"]
    assert len(kept["body"]) == BODY_KEEP and kept["body_cut"]
    assert len(kept["reason"]) == 1024
    assert bounded(None) == [] and bounded({"error": "x"}) == []
    doc = engine_result(100, 1000, 2000)
    doc["kinds"] = [{**doc["kinds"][0], "wrong_replies": [long]}]
    result = EngineResult.from_dict(doc)
    assert len(result.raw["kinds"][0]["wrong_replies"][0]["body"]) == BODY_KEEP  # as stored
    (w,) = result.wrong_replies
    assert (w.kind, w.error, w.status) == (doc["kinds"][0]["name"], "bad_body", 200)


def test_escaped_text_cannot_act_on_a_terminal():
    text = escaped(HOSTILE)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert text.startswith("\\x1b[2J\\x1b]0;owned\\x07") and text.endswith("\\u202e")
    assert escaped("a\\x1b") == "a\\\\x1b"  # a backslash the app sent is not an escape
    (w,) = read("pong", [{**QUOTE, "body": HOSTILE}])
    lines = terminal_lines(w)
    assert lines[0] == "pong: bad_body: json items.4.id: got 7, expected 8"
    assert lines[1:3] == ["  < HTTP/1.1 200 OK", "  < Content-Type: application/json"]
    assert all("\x1b" not in line for line in lines)


def test_a_cell_keeps_the_first_repeats_reply_of_each_kind_and_class():
    first = read("pong", [QUOTE])
    later = read("pong", [{**QUOTE, "reason": "later"}, {**QUOTE, "error": "bad_status"}])
    found = first_of_cell([first, later])
    assert [(w.error, w.reason) for w in found] == [
        ("bad_body", QUOTE["reason"]),
        ("bad_status", QUOTE["reason"]),
    ]


def test_load_hosts_merged_keep_the_first_hosts_reply_of_each_class():
    a = {"name": "pong", "wrong_replies": [{**QUOTE, "error": "bad_status"}]}
    b = {"name": "pong", "wrong_replies": [QUOTE, {**QUOTE, "error": "bad_status", "status": 9}]}
    (kind,) = _merge_kinds([{"kinds": [a]}, {"kinds": [b]}])
    assert [(w["error"], w["status"]) for w in kind["wrong_replies"]] == [
        ("bad_status", 200),
        ("bad_body", 200),
    ]


def _store_with_quotes(tmp_path: Path) -> Path:
    path = build_store(tmp_path / "s.sqlite", speeds={"waitress": 3000.0}, levels=(4,))
    hostile = {**QUOTE, "kind": "pong", "body": HOSTILE, "reason": "status [red]500[/]"}
    with sqlite3.connect(path) as db:
        for rid, extra in db.execute("SELECT id, extra_json FROM repeats").fetchall():
            doc = {**json.loads(extra or "{}"), "wrong_replies": [hostile]}
            db.execute("UPDATE repeats SET extra_json=? WHERE id=?", (json.dumps(doc), rid))
    return path


def test_show_wide_quotes_wrong_replies_as_text(tmp_path):
    store = Store(_store_with_quotes(tmp_path), create=False, read_only=True)
    out = io.StringIO()
    show(store, Console(file=out, force_terminal=True, width=200), wide=True)
    text = out.getvalue()
    assert "waitress: the first wrong reply of each class, as received:" in text
    assert "pong: bad_body: status [red]500[/]" in text  # markup shown, not read
    assert "[bold red]boom[/]" in text and "\x1b[2J" not in text and "\\x1b[2J" in text
    narrow = io.StringIO()
    show(store, Console(file=narrow, width=200))
    assert "as received" not in narrow.getvalue()
    rows = json.loads(_csv_or_json(store, "json"))["cells"]
    assert rows[0]["wrong_replies"] == ["pong: bad_body: status [red]500[/]"]
    assert "pong: bad_body: status [red]500[/]" in _csv_or_json(store, "csv")


def _csv_or_json(store: Store, fmt: str) -> str:
    out = io.StringIO()
    show(store, Console(file=out, width=200), fmt=fmt, wide=True)
    return out.getvalue()


def test_the_report_escapes_quoted_replies(tmp_path):
    data = load_report_data(Store(_store_with_quotes(tmp_path), create=False, read_only=True))
    page = html_section(data)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\x1b" not in page and "\\x1b[2J" in page
    md = "\n".join(markdown_lines(data))
    assert "### Wrong replies, quoted" in md and "\x1b" not in md
