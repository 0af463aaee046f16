"""The report as a reader sees it, in headless Chromium: the findings come first, the environment
is said once, and a latency a diagnosis disputes is drawn marked (a diamond) in the latency chart,
as the table marks it."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

from unit.synthetic import build_store

from .test_report_helpers import ARTIFACTS, chromium_driver, wsgibench

DISPUTE = {
    "code": "littles-law",
    "message": "16 connections, but throughput × mean latency = "
    "3 in flight: the numbers disagree by more than 20 %",
    "invalid": False,
}


def _store_with_a_disputed_latency(path: Path) -> Path:
    build_store(path, levels=(4, 16))
    db = sqlite3.connect(path)
    with db:
        db.execute(
            "UPDATE cells SET diagnoses_json=? WHERE server='waitress' AND level=16",
            (json.dumps([DISPUTE]),),
        )
    db.close()
    return path


def test_findings_first_one_environment_and_the_disputed_point_marked(tmp_path: Path):
    store = _store_with_a_disputed_latency(tmp_path / "s.sqlite")
    out = tmp_path / "report"
    wsgibench("report", str(store), "--out", str(out), "--no-png")
    driver = chromium_driver()
    try:
        driver.get((out / "report.html").resolve().as_uri())
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not driver.execute_script(
            "return document.body.getAttribute('data-charts-done')"
        ):
            time.sleep(0.2)
        headings = driver.execute_script(
            "return Array.from(document.querySelectorAll('h2')).map(h => h.textContent)"
        )
        assert headings[0] == "Findings", headings
        findings = driver.execute_script(
            "return Array.from(document.querySelectorAll('ul.findings li')).map(l => l.textContent)"
        )
        assert any(
            f.startswith("closed, connections 16:") and " leads with " in f for f in findings
        ), findings
        assert any("fails Little's law" in f and "waitress (closed 16)" in f for f in findings)
        captions = driver.execute_script(
            "return Array.from(document.querySelectorAll('caption')).map(c => c.textContent)"
        )
        assert captions.count("Environment") == 1 and not any("kernel" in c for c in captions)
        specs = json.loads(
            driver.execute_script("return document.getElementById('wsgibench-specs').textContent")
        )
        rows = specs["latency-closed"]["data"]["values"]
        marked = [r for r in rows if r["status"] == "disputed"]
        assert {(r["name"], r["level"]) for r in marked} == {("waitress", 16)}
        assert all("Little's law" in r["reason"] for r in marked)
        # Each point as drawn: its shape (a diamond is four straight edges, a circle two arcs)
        # and the label Vega gives it; the disputed cell, and only it, drawn as a diamond.
        points = driver.execute_script(
            "return Array.from(document.querySelectorAll("
            "'#chart-latency-closed path[aria-roledescription=\"point\"]'))"
            ".map(p => [p.getAttribute('d'), p.getAttribute('aria-label')])"
        )
        shapes = [(_shape(d), label) for d, label in points]
        diamonds = [label for shape, label in shapes if shape == "diamond"]
        assert diamonds and all("status: disputed" in label for label in diamonds), shapes
        assert all("server: waitress" in label and "level: 16;" in label for label in diamonds)
        assert all(shape == "circle" for shape, label in shapes if label not in diamonds), shapes
        assert len(diamonds) == sum("status: disputed" in label for _, label in shapes)
        ARTIFACTS.mkdir(exist_ok=True)
        driver.set_window_size(1400, driver.execute_script("return document.body.scrollHeight"))
        driver.save_screenshot(str(ARTIFACTS / "report-findings.png"))
    finally:
        driver.quit()


def _shape(path: str) -> str:
    """A point mark's shape from its SVG path: Vega draws a circle as two arcs and a diamond as
    four straight edges about the centre."""
    if re.fullmatch(r"M[-\d.]+,[-\d.]+(A[-\d.,]+){2}Z?", path):
        return "circle"
    if re.fullmatch(r"M[-\d.]+,[-\d.]+(L[-\d.]+,[-\d.]+){3}Z", path):
        return "diamond"
    return f"other ({path[:40]})"
