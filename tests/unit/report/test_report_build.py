"""Report building from synthetic stores: tables, winners and ties, chart specs, HTML and Markdown outputs."""

from __future__ import annotations

import json
import re
import sqlite3
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from wsgibench.cli.report import report_command
from wsgibench.report import write_report
from wsgibench.report.charts import charts
from wsgibench.report.data import load_report_data
from wsgibench.report.html import summary_table
from wsgibench.report.markdown import table as table_markdown
from wsgibench.report.table import METRICS, load_table, reference_level
from wsgibench.results.store import Store

from ..synthetic import build_store


@pytest.fixture
def store(tmp_path):
    return Store(build_store(tmp_path / "r.sqlite", disqualify=("waitress", 16)), create=False)


def _specs_text(data) -> str:
    return json.dumps([c.spec for c in charts(data)])


def test_table_best_throughput_reference_level_and_status(store):
    data = load_report_data(store)
    (load,) = data.loads
    assert load.level_title.startswith("connections")
    assert reference_level(load) == 4  # waitress was disqualified at 16
    table = load_table(load)
    rows = {r.server: r for r in table.rows}
    assert table.rows[0].server == "nginx-baseline"
    gthread = rows["gunicorn-gthread"]
    assert (
        gthread.entries["throughput"].level == 16
        and len(gthread.entries["throughput"].samples) == 3
    )
    assert gthread.entries["throughput"].repeat_ids and gthread.entries["throughput"].cell_id
    assert rows["waitress"].status.startswith("disqualified at 16: error rate")
    assert gthread.capabilities["keep_alive"] and gthread.flavour == "prefork+threads"


def test_winners_exclude_the_baseline_and_declare_ties(tmp_path):
    path = build_store(
        tmp_path / "t.sqlite",
        speeds={"nginx-baseline": 9e4, "a": 5000.0, "b": 5001.0, "c": 1000.0},
        random_jitter=False,
    )
    table = load_table(load_report_data(Store(path, create=False)).loads[0])
    win = {w.metric.key: w for w in table.winners}
    assert "nginx-baseline" not in " ".join(win["throughput"].labels)
    assert {label.split()[0] for label in win["throughput"].labels} == {
        "a",
        "b",
    }  # within noise of each other
    assert win["throughput"].tied
    assert all("c" != label.split()[0] for label in win["throughput"].labels)
    assert win["errors"].tied  # everyone at 0 errors


def test_a_disputed_number_is_shown_but_never_crowned(tmp_path):
    # The lowest latency, with the waiting requests missing from it (Little's law fails).
    path = build_store(
        tmp_path / "d.sqlite", speeds={"a": 5000.0, "b": 3000.0}, random_jitter=False
    )
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE cells SET diagnoses_json=? WHERE server='b'",
            (
                json.dumps(
                    [{"code": "littles-law", "message": "numbers disagree", "invalid": False}]
                ),
            ),
        )
        db.execute(
            "UPDATE repeats SET latency_p50_us=1, latency_p99_us=2 WHERE cell_id IN "
            "(SELECT id FROM cells WHERE server='b')"
        )
    table = load_table(load_report_data(Store(path, create=False)).loads[0])
    win = {w.metric.key: w for w in table.winners}
    for key in ("latency_p50", "latency_p99"):
        assert [label.split()[0] for label in win[key].labels] == ["a"]
        assert [(label.split()[0], why) for label, why in win[key].unranked] == [
            ("b", "its latency fails Little's law: requests are missing from it")
        ]
    assert win["throughput"].unranked == []  # its throughput is still its own
    md = "\n".join(table_markdown(load_report_data(Store(path, create=False)), table))
    assert "not ranked: b 1.0 (its latency fails Little's law" in md and " ⚠ (" in md


def test_charts_carry_caption_record_ids_and_mark_disqualified(store):
    data = load_report_data(store)
    made = charts(data)
    assert [c.slug for c in made] == [
        "throughput-closed",
        "latency-closed",
        "errors-closed",
        "memory-closed",
        "cpu-closed",
        "efficiency-closed",
    ]
    for c in made:
        title = c.spec["title"]
        assert (
            "synthetic" in title["subtitle"][0]
            and "Test CPU 3000, 2 cores, kernel 6.1.0-test" in title["subtitle"][1]
            and "engine 0.1.0" in title["subtitle"][2]
        ), c.slug
        assert "$schema" not in c.spec
    text = _specs_text(data)
    assert '"cell_id"' in text and '"repeat_ids"' in text
    assert "error rate 12.0% > 5%" in text  # the reason
    assert "listen queue overflowed 3 times" in text  # the harness's diagnosis
    throughput = json.dumps(made[0].spec)
    assert "strokeDash" in throughput and "machine ceiling" in throughput
    assert '"cross"' in throughput  # disqualified points get their own shape


def test_open_models_label_corrected_latency_and_sessions_draw_timelines(tmp_path):
    path = build_store(tmp_path / "s.sqlite", model="sessions", levels=(5, 10))
    made = charts(load_report_data(Store(path, create=False)))
    slugs = [c.slug for c in made]
    assert "timeline-sessions" in slugs
    latency = next(c for c in made if c.slug.startswith("latency"))
    assert "Corrected latency" in latency.spec["title"]["text"]
    timeline = json.dumps(next(c for c in made if c.slug.startswith("timeline")).spec)
    for metric in ("open connections", "latency p99 (ms)", "CPU % of one core", "RSS (MiB)"):
        assert metric in timeline


class _External(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        self.found += [
            f"{tag} {k}={v}"
            for k, v in attrs
            if k in ("src", "href") and v and re.match(r"(https?:)?//", v)
        ]


def test_write_report_files(store, tmp_path):
    files = write_report(store, tmp_path / "out")
    html = files.html.read_text()
    parser = _External()
    parser.feed(html)
    assert parser.found == []
    assert "<script src" not in html and "window.vegaEmbed" in html
    assert html.count('class=chart id="chart-') == 6
    assert html.count("</script") == html.count("<script") == 3  # nothing closes a script early
    assert files.headline.name == "throughput.png" and files.headline.read_bytes().startswith(
        b"\x89PNG"
    )
    assert len(files.pngs) == 6
    md = files.markdown.read_text()
    assert "| gunicorn-gthread | WSGI | prefork+threads | 23.0.0 |" in md
    assert "![Throughput against load — closed](charts/throughput-closed.png)" in md
    assert "disqualified at 16" in md and "Test CPU 3000" in md


def test_report_command(tmp_path, store):
    out = tmp_path / "cli-out"
    result = CliRunner().invoke(report_command, [str(store.path), "--out", str(out), "--no-png"])
    assert result.exit_code == 0, result.output
    assert (out / "report.html").exists() and (out / "summary.md").exists()
    missing = CliRunner().invoke(report_command, [str(tmp_path / "nope.sqlite"), "--out", str(out)])
    assert missing.exit_code == 3
    bad_study = CliRunner().invoke(
        report_command, [str(store.path), "--out", str(out), "--study", "9"]
    )
    assert bad_study.exit_code == 2 and "no study with id 9" in bad_study.output


def test_the_table_shows_errors_as_wrk_and_httperf_counted_them_never_ranked(tmp_path):
    path = build_store(tmp_path / "w.sqlite", speeds={"a": 5000.0, "b": 3000.0}, levels=(4,))
    with sqlite3.connect(path) as db:  # b closes every keep-alive connection silently after a reply
        for rid, raw in db.execute(
            "SELECT r.id, r.engine_json FROM repeats r JOIN cells c ON c.id = r.cell_id "
            "WHERE c.server = 'b'"
        ).fetchall():
            doc = json.loads(raw)
            doc["totals"]["unannounced_closes"] = doc["totals"]["ok"]
            db.execute("UPDATE repeats SET engine_json=? WHERE id=?", (json.dumps(doc), rid))
    data = load_report_data(Store(path, create=False))
    table = load_table(data.loads[0])
    rows = {r.server: r for r in table.rows}
    b = rows["b"].entries
    assert b["errors"].median == 0.0  # ours: every request was answered
    assert b["wrk_errors"].median == b["httperf_errors"].median == 0.5
    assert len(b["wrk_errors"].samples) == 3 and b["wrk_errors"].cell_id == b["errors"].cell_id
    assert rows["a"].entries["wrk_errors"].median == 0.0
    assert {w.metric.key for w in table.winners} <= {m.key for m in METRICS}
    md = "\n".join(table_markdown(data, table))
    head = next(line for line in md.splitlines() if line.startswith("| server"))
    titles = [c.strip() for c in head.strip("|").split("|")]
    at = titles.index("error rate at connections 4")
    assert titles[at + 1].startswith("errors as wrk would have counted them (seeds 003, 004)")
    assert titles[at + 2].startswith("errors as httperf would have counted them (seed 000)")
    b_row = next(line for line in md.splitlines() if line.startswith("| b "))
    cells = [c.strip() for c in b_row.strip("|").split("|")]
    assert cells[at].startswith("0.00%") and cells[at + 1].startswith("50.00% (50.00%–50.00%)")
    html = summary_table(data, table)
    assert "errors as wrk would have counted them (seeds 003, 004), at connections 4" in html


def test_a_pool_load_is_titled_in_requests_per_second():
    from wsgibench.report.data import LoadData, _searched

    pool = {"model": "capacity", "slo_p99_ms": 10, "start_rate": 2000, "pool": 64}
    assert LoadData("p", "rate", pool).level_title == "offered load (requests/s on 64 connections)"
    assert "from 2000 requests/s on 64 connections" in _searched(pool)
    calls = {"model": "capacity", "slo_p99_ms": 10, "start_rate": 20, "calls": 100}
    assert LoadData("c", "rate", calls).level_title == "offered load (new connections/s)"
    assert "from 20 new connections/s" in _searched(calls)
