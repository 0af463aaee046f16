"""The HTML report's page: every version the study recorded stated (none as "?"), a note that
applies to many winners said once, and every table in a box that scrolls when it is wider than
the page (the browser's check is tests/e2e/test_report_width.py)."""

from __future__ import annotations

import re
from pathlib import Path

from unit.synthetic import ENV, build_store
from wsgibench.report.data import load_report_data
from wsgibench.report.findings import findings
from wsgibench.report.html import render
from wsgibench.report.markdown import render as markdown
from wsgibench.report.table import load_table
from wsgibench.results.store import Store

UNTESTED = "1 vs 1 server start: untested (a test needs at least 2 starts of each server)"


def _page(tmp: Path, env: dict, starts: int | None = None) -> tuple[str, str]:
    path = build_store(tmp / "s.sqlite", env=env, starts=starts)
    data = load_report_data(Store(path, create=False, read_only=True))
    tables = [load_table(load) for load in data.loads]
    return render(data, tables, []), markdown(data, tables, [], "charts")


def _environment(html: str) -> dict[str, str]:
    table = html.split("<b>Environment</b>")[1].split("</table>")[0]
    return dict(re.findall(r"<th class=l>([^<]+)</th><td class=l>([^<]*)</td>", table))


def test_every_recorded_version_is_stated_and_none_is_a_question_mark(tmp_path: Path):
    env = ENV | {"nginx_version": "1.22.1", "apache_version": None, "git_commit": None}
    html, _ = _page(tmp_path, env)
    rows = _environment(html)
    assert rows["nginx"] == "1.22.1"
    assert rows["apache"] == "needed by a server, but it did not say its version"
    assert rows["engine"] == "0.1.0 (protocol 1, format 2)"
    assert rows["wsgibench"] == "0.1.0"  # no "(git ?)"
    assert rows["servers"] == "gunicorn-gthread 23.0.0, nginx-baseline 1.22.1, waitress 3.0.2"
    assert "?" not in "".join(rows.values()), rows


def test_a_binary_no_server_needed_has_no_row(tmp_path: Path):
    rows = _environment(_page(tmp_path, ENV)[0])
    assert "nginx" not in rows and "apache" not in rows


def test_the_reason_no_winner_was_tested_is_said_once(tmp_path: Path):
    html, md = _page(tmp_path, ENV, starts=1)
    winners = html.split("Winners per metric")[1].split("</ul>")[0]
    assert winners.count(UNTESTED) == 1 and winners.count("ranked by value†") >= 5, winners
    after = md.split("**Winners**")[1].split("Full interactive")[0]
    assert after.count(UNTESTED) == 1 and f"† {UNTESTED}" in after, after


def test_every_table_scrolls_in_a_box_of_the_page_width(tmp_path: Path):
    html, _ = _page(tmp_path, ENV)
    body = html.split("<body>")[1].split("<script")[0]
    tables = body.count("<table")
    assert tables >= 3 and body.count("<div class=wide><table") == tables
    assert ".wide { max-width: 100%; overflow-x: auto; }" in html


def test_what_a_test_needs_is_said_once_in_the_findings(tmp_path: Path):
    path = build_store(tmp_path / "s.sqlite", starts=1)
    lines = findings(load_report_data(Store(path, create=False, read_only=True)))
    untested = [line for line in lines if "1 vs 1 server start: untested" in line]
    assert len(untested) >= 3, lines
    assert sum(UNTESTED in line for line in lines) == 1 and UNTESTED in untested[0], lines
