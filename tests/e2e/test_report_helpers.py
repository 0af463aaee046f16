"""Shared by the report/compare end-to-end tests: run real tiny studies, call the CLI, drive headless Chromium."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from .helpers import cli, require

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
CHROME_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
]


def wsgibench(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    argv = cli(*args)
    env = {**os.environ, "COLUMNS": "220"}  # rich tables wide enough not to wrap
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    if check:
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


def run_study(
    folder: Path,
    name: str,
    servers: list[str],
    levels: list[int],
    repeats: int = 3,
    app: str = "pong",
) -> Path:
    """Run a real study (real servers, real engine) into its own store; returns the store path."""
    for server in servers:
        require(server)
    study = folder / f"{name}.toml"
    study.write_text(f"""
name = "{name}"
description = "end-to-end test study for reports"
servers = {json.dumps(servers)}
app = "{app}"
repeats = {repeats}
[[load]]
name = "closed"
model = "closed"
levels = {json.dumps(levels)}
duration_s = 1.0
warmup_s = 0.3
""")
    results = folder / f"{name}.sqlite"
    wsgibench("run", str(study), "--results", str(results), "--no-report")
    return results


def chromium_driver():
    """Headless Chromium via the Debian chromedriver, fresh profile, console and network logged."""
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.fail(
            "needs Debian packages chromium and chromium-driver "
            "(apt-get install -y chromium chromium-driver)"
        )
    from selenium import webdriver  # in the test extras: a missing one is an error, not a skip

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="report-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
    env_proxy = {k: os.environ.pop(k) for k in ("http_proxy", "https_proxy") if k in os.environ}
    try:
        return webdriver.Chrome(options=options, service=service)
    finally:
        os.environ.update(env_proxy)


def requested_urls(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


# Every element whose right edge passes the window's width, unless an ancestor that scrolls
# sideways (a table's box, a chart's) holds it and itself fits: [tag, class, right edge, text].
# (An SVG clips its own overflow, so only a scrolling box counts as holding.)
OVERFLOWING = """
var width = document.documentElement.clientWidth, out = [];
function held(el) {
  for (var p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    var style = getComputedStyle(p).overflowX;
    if ((style === 'auto' || style === 'scroll') && p.getBoundingClientRect().right <= width + 0.5) {
      return true;
    }
  }
  return false;
}
document.querySelectorAll('body *').forEach(function (el) {
  var box = el.getBoundingClientRect();
  if (box.width > 0 && box.right > width + 0.5 && !held(el)) {
    out.push([el.tagName, el.className && String(el.className), Math.round(box.right),
              (el.textContent || '').slice(0, 60)]);
  }
});
return [width, document.documentElement.scrollWidth, out.slice(0, 20)];
"""


def overflowing(driver) -> tuple[int, int, list]:
    """The window's width, the page's scroll width, and what passes the window's edge."""
    width, scroll, found = driver.execute_script(OVERFLOWING)
    return int(width), int(scroll), found


def wait_for_charts(driver, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not driver.execute_script(
        "return document.body.getAttribute('data-charts-done')"
    ):
        time.sleep(0.2)
