"""`wsgibench report` end to end: a real stored study becomes HTML that renders offline in headless Chromium."""

from __future__ import annotations

import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from wsgibench.results.store import Store

from .test_report_helpers import (
    ARTIFACTS,
    chromium_driver,
    overflowing,
    requested_urls,
    run_study,
    wsgibench,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    results = run_study(folder, "report-e2e", ["nginx-baseline", "gunicorn-gthread"], [4, 16])
    out = folder / "out"
    wsgibench("report", str(results), "--out", str(out))
    return out


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.external: list[str] = []
        self.scripts_with_src: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if (
                name in ("src", "href", "srcset", "data", "action", "poster")
                and value
                and re.match(r"\s*(https?:)?//", value, re.I)
            ):
                self.external.append(f"<{tag} {name}={value}>")
        if tag == "script" and dict(attrs).get("src"):
            self.scripts_with_src.append(dict(attrs)["src"])


def test_files_written(report):
    assert (report / "report.html").stat().st_size > 100_000  # the vega bundle is inlined
    md = (report / "summary.md").read_text()
    assert "gunicorn-gthread" in md and "nginx-baseline" in md and "Winners" in md
    assert (report / "charts" / "throughput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for png in (report / "charts").glob("*.png"):
        assert png.stat().st_size > 5000, png
        assert f"charts/{png.name}" in md or png.name == "throughput.png"


def test_html_has_no_external_src_or_href(report):
    text = (report / "report.html").read_text()
    parser = _Links()
    parser.feed(text)
    assert parser.external == []
    assert parser.scripts_with_src == []  # every script is inline
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", text)


def _rows_with_ids(node: object) -> list[dict]:
    """Every data row of the charts' specs that names a cell, wherever in the spec it sits."""
    if isinstance(node, dict):
        found = [node] if "cell_id" in node else []
        return found + [row for value in node.values() for row in _rows_with_ids(value)]
    if isinstance(node, list):
        return [row for value in node for row in _rows_with_ids(value)]
    return []


def test_html_carries_study_environment_and_record_ids(report):
    text = (report / "report.html").read_text()
    store = Store(report.parent / "report-e2e.sqlite", create=False, read_only=True)
    study = store.study()
    env = json.loads(study["environment_json"])
    # the stored environment's own values, not only the names of its fields
    assert f"kernel {env['kernel']}" in text, env["kernel"]
    assert f"engine {env['engine']['engine_version']}," in text, env["engine"]
    assert study["name"] == "report-e2e" and "report-e2e" in text
    # the table's entries name their records: each a stored cell with exactly its repeats
    records = {
        cell.id: " ".join(str(r["id"]) for r in store.repeats(cell.id))
        for cell in store.cells(study["id"])
    }
    assert len(records) == 4 and all(records.values()), records
    named = re.findall(r"cell (\d+), repeats ([\d ]+)", text)
    assert named, "no table entry names its records"
    assert all(records.get(int(cell)) == repeats for cell, repeats in named), (named, records)
    # and so do the charts' points: each names a stored cell and exactly its repeats
    match = re.search(r'<script[^>]*id="wsgibench-specs"[^>]*>(.*?)</script>', text, re.S)
    assert match, "no chart specs in the page"
    rows = _rows_with_ids(json.loads(match[1]))
    assert rows and {row["cell_id"] for row in rows} == set(records)
    assert all(row["repeat_ids"] == records[row["cell_id"]] for row in rows)


def test_report_renders_offline_in_headless_chromium(report):
    driver = chromium_driver()
    try:
        driver.set_page_load_timeout(60)
        driver.get("about:blank")
        driver.get_log("performance")  # drop what the browser's start page requested
        driver.get((report / "report.html").resolve().as_uri())
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not driver.execute_script(
            "return document.body.getAttribute('data-charts-done')"
        ):
            time.sleep(0.2)
        containers = driver.execute_script("""
            return Array.from(document.querySelectorAll('.chart')).map(function (el) {
              return [el.id, el.querySelectorAll('svg, canvas').length,
                      el.querySelectorAll('svg path, svg text').length];
            });""")
        assert len(containers) == 6, containers
        for chart_id, drawn, marks in containers:
            assert drawn >= 1 and marks > 10, (chart_id, drawn, marks)
        width, scroll, past = overflowing(driver)  # fits the 1,400 px window
        assert past == [] and scroll <= width <= 1400, (width, scroll, past)
        ARTIFACTS.mkdir(exist_ok=True)
        driver.set_window_size(
            1400, driver.execute_script("return document.body.scrollHeight") + 100
        )
        driver.save_screenshot(str(ARTIFACTS / "report.png"))
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
        urls = requested_urls(driver)
        assert urls, "the performance log recorded no request at all (not even the page)"
        leaving = [u for u in urls if not u.startswith(("file://", "data:"))]
        assert leaving == []
    finally:
        driver.quit()
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000
