"""The HTML report fits a 1,400 px window in headless Chromium: the widest report a study makes (the
frameworks study's shape: fourteen servers, a ceiling and six frameworks, cells not ranked with
long reasons, long server names) has no element past the window's edge; wide tables scroll inside
their box. The store is synthetic (the page's layout is what is tested, not a measurement); the
report of a real study is held to the same check in test_report.py."""

from __future__ import annotations

from pathlib import Path

from unit.synthetic_loads import Spec, build
from wsgibench.report.write import write_report
from wsgibench.results.store import Store

from .test_report_helpers import ARTIFACTS, chromium_driver, overflowing, wait_for_charts

SERVERS = [
    "gunicorn-sync", "gunicorn-gthread", "uwsgi-http11", "mod-wsgi", "waitress", "granian",
    "bjoern", "meinheld", "uvicorn", "hypercorn", "daphne", "granian-asgi", "gunicorn-asgi",
    "gunicorn-uvicorn+nginx",
]  # fmt: skip
FRAMEWORKS = ["flask", "django", "fastapi", "starlette", "falcon", "litestar"]
REASON = (
    "engine saturated: its threads were busy 99% of the time and the schedule fell behind by "
    "more than 10% of the requests (docs/measurement.md, 'the engine as a bottleneck')"
)


def _store(folder: Path) -> Path:
    closed = {"model": "closed", "levels": [32], "duration_s": 2.0, "warmup_s": 0.5}
    loads = [{"name": "pong", "role": "ceiling", **closed}] + [
        {"name": f, "app": f, "role": "framework", **closed} for f in FRAMEWORKS
    ]
    cells = {}
    for i, server in enumerate(SERVERS):
        cells[("pong", server, 32)] = Spec(20000 + 1000 * i)
        for j, framework in enumerate(FRAMEWORKS):
            bad = (i + j) % 5 == 0
            status = "invalid" if bad else "measured"
            cells[(framework, server, 32)] = Spec(
                3000 + 100 * i + 10 * j, status=status, reason=REASON if bad else None
            )
    return build(folder / "wide.sqlite", loads, cells, name="frameworks")


def test_the_widest_report_fits_a_1400_px_window(tmp_path: Path):
    files = write_report(Store(_store(tmp_path), read_only=True), tmp_path / "out", png=False)
    driver = chromium_driver()
    try:
        driver.set_page_load_timeout(60)
        driver.get(files.html.resolve().as_uri())
        wait_for_charts(driver)
        assert driver.execute_script("return document.body.getAttribute('data-charts-done')")
        width, scroll, past = overflowing(driver)
        assert 1300 <= width <= 1400, width  # the window's width less any scroll bar
        assert past == [] and scroll <= width, (width, scroll, past)
        # The summary tables are wider than the page here: they scroll inside their box.
        boxes = driver.execute_script(
            "return Array.from(document.querySelectorAll('div.wide')).map(function (b) {"
            " return [b.scrollWidth, b.clientWidth]; });"
        )
        assert any(inner > outer for inner, outer in boxes), boxes
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "report-width.png"))
    finally:
        driver.quit()
