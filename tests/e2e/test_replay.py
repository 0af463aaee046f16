"""An access log replayed, through the installed `wsgibench` script.

The example (examples/replay/): its script writes the shop's log (20 s, a burst of 400 req/s in
seconds 8-10, three kinds, two lines that are no requests); `wsgibench traffic` prints its model;
its study's first load runs at speeds 1 and 2 on one server. Every second of the log, the
requests the engine had due are exactly the log's (at speed 2, two log seconds in each), each
kind was sent exactly as often as the log holds it (counted here from the log by a rule of this
test's own), the server answered every one, and `show` and the report give each kind's figures
and the log's rate beside the server's p99.

Capacity in units of the traffic: the sleep app (10 ms a request) on one gunicorn sync worker;
the capacity load finds its capacity in requests/s, the replay's search the highest speed of a
log whose busiest seconds hold PEAK requests each; that speed is within 10 % of capacity / PEAK
(a budget of ten service times and six busy seconds: either search misses a few % over the
knee, its queue then growing past the budget within the window).
About 4 minutes on 2 cores (a capacity search of each kind: 2 to 5 of them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from wsgibench.results.capacity_read import read_capacities
from wsgibench.results.kind_figures import trace_seconds
from wsgibench.results.store import Store

from .helpers import cli, expect_measured, require, run_capacity_study

pytestmark = pytest.mark.e2e

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "replay"
SERVER = "waitress"
# This test's own reading of the shop's log: second of the minute, and kind.
LINE = re.compile(r':\d\d:(\d\d) \+0000\] "(GET /items/\d+|GET /search\?|POST /orders)')
KIND_OF = {"GET /items/": "GET /items/{id}", "GET /search?": "GET /search?q={}"}


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cli(*args), capture_output=True, text=True, timeout=600, cwd=cwd)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


def _logged(log: Path, but: str = "") -> tuple[Counter[int], Counter[str]]:
    """The log's requests per second and per kind (but those of kind `but`), read by this
    test's own rule."""
    seconds: Counter[int] = Counter()
    kinds: Counter[str] = Counter()
    for line in log.read_text().splitlines():
        m = LINE.search(line)
        if m and m.group(2) != but:
            seconds[int(m.group(1))] += 1
            kinds[
                next((v for k, v in KIND_OF.items() if m.group(2).startswith(k)), m.group(2))
            ] += 1
    return seconds, kinds


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> tuple[Path, Store, str]:
    require(SERVER)
    folder = tmp_path_factory.mktemp("replay")
    for name in ("app.py", "order.json", "make_log.py"):
        shutil.copy(EXAMPLE / name, folder / name)
    subprocess.run([sys.executable, "make_log.py", "access.log"], cwd=folder, check=True)
    raw = (EXAMPLE / "study.toml").read_text()
    study = tomllib.loads(raw)
    assert [load["model"] for load in study["load"]] == ["replay", "replay"]
    # the example's first load, as it is; the second (a capacity search per server) is left out
    first_capacity = raw.index("[[load]]", raw.index("[[load]]") + 1)
    (folder / "study.toml").write_text(raw[:first_capacity])
    results = folder / "r.sqlite"
    _cli(
        "run",
        "study.toml",
        "--servers",
        SERVER,
        "--repeats",
        "1",
        "--results",
        str(results),
        cwd=folder,
    )
    shown = _cli("show", "--results", str(results)).stdout
    return folder, Store(results, read_only=True), shown


def test_traffic_prints_the_logs_model(example):
    folder, _, _ = example
    out = _cli("traffic", "access.log", "--group", "/items/{id}", cwd=folder).stdout
    seconds, kinds = _logged(folder / "access.log", but="POST /orders")
    assert "2,902 lines (combined), 2,900 requests read" in out
    assert "2 lines not read" in out and "line 402" in out
    assert "POST /orders" in out and "name a file in bodies" in out  # no --body: left out
    assert f"peak {max(seconds.values()):,} req/s in second 8" in out
    for kind, n in kinds.items():
        assert re.search(rf"{re.escape(kind)}\s*│\s*{n:,}", out), (kind, n, out)
    # with the body the study names, the POSTs are replayed too
    out = _cli("traffic", "access.log", "--body", "POST /orders=order.json", cwd=folder).stdout
    assert "2,900 requests read (all replayed)" in out and "left out" not in out


def test_each_second_of_the_log_is_sent_exactly_and_each_kind_as_often(example):
    folder, store, _ = example
    seconds, kinds = _logged(folder / "access.log")
    assert sum(seconds.values()) == 2900
    cells = {c.level: c for c in store.cells(store.study()["id"])}
    assert sorted(cells) == [1.0, 2.0]
    for speed, cell in cells.items():
        expect_measured(cell)
        (repeat,) = store.stored_repeats(cell.id)
        due = [s.arrivals for s in trace_seconds(repeat.engine)]
        per = int(speed)
        want = [sum(seconds[per * j + i] for i in range(per)) for j in range(20 // per)]
        assert due[: len(want)] == want, (speed, due)
        assert not any(due[len(want) :])
        sent = {k.name: k.requests_sent for k in repeat.engine.kinds}
        assert sent == dict(kinds), (speed, sent)
        assert repeat.engine.totals.ok == 2900 and repeat.engine.totals.error_count == 0


def test_show_and_the_report_give_each_kind_and_the_rate_beside_the_p99(example):
    folder, store, shown = example
    assert "replay · speed 2 · per request kind" in shown
    for kind in ("GET /items/{id}", "GET /search?q={}", "POST /orders"):
        assert kind in shown
    out = folder / "report"
    _cli("report", "--results", str(store.path), "--out", str(out))
    page = (out / "report.html").read_text()
    assert "Per request kind" in page and 'data-chart="trace-replay"' in page
    assert (out / "charts" / "trace-replay.png").stat().st_size > 0


SLEEP_S = 0.010
PEAK = 50  # requests in each of the log's six busiest seconds
SECONDS = [10, 10, *[PEAK] * 6, 10]
CAPACITY_STUDY = f"""
name = "replay-capacity-e2e"
servers = ["gunicorn-sync"]
app = "sleep"
app_env = {{ WSGIBENCH_SLEEP_S = "{SLEEP_S}" }}
workers = 1
threads = 1
repeats = 2
starts = 1  # one server start a cell: the search's (or history's) own logic is tested here
random_order = false

[[load]]
name = "rate"
model = "capacity"
slo_p99_ms = 100
arrival = "uniform"
duration_s = 4.0
warmup_s = 1.0
start_rate = 60
resolution = 0.03
step_repeats = 2
cost_cells = false

[[load]]
name = "replay"
model = "replay"
log = "burst.log"
slo_p99_ms = 100
speed = 1
resolution = 0.03
step_repeats = 2
cost_cells = false
warmup_s = 1.0
"""


def _burst_log(path: Path) -> None:
    """9 s of one kind of request: 10 a second, then six seconds of PEAK, then 10 again."""
    lines = []
    for second, n in enumerate(SECONDS):
        stamp = f"14/Mar/2025:09:00:0{second} +0000"
        lines += [f'10.0.0.1 - - [{stamp}] "GET /slow HTTP/1.1" 200 5 "-" "t"'] * n
    path.write_text("\n".join(lines) + "\n")


def test_the_replay_capacity_is_the_servers_capacity_over_the_logs_peak(tmp_path):
    require("gunicorn-sync")
    (tmp_path / "cap.toml").write_text(CAPACITY_STUDY)
    _burst_log(tmp_path / "burst.log")
    # two searches of about 8 steps of 2 repeats each: 2 to 5 minutes on a shared 2-core machine
    store = run_capacity_study(tmp_path / "cap.toml", tmp_path, timeout=900)
    found = {c.load: c for c in read_capacities(store, store.study()["id"])}
    rate, replay = found["rate"], found["replay"]
    assert rate.result.invalid is None and replay.result.invalid is None
    capacity_rps = rate.requests(rate.result.capacity)
    speed = replay.result.capacity
    assert capacity_rps and speed, (rate.result.steps, replay.result.steps)
    predicted = capacity_rps / PEAK
    assert abs(speed - predicted) <= 0.10 * predicted, (speed, predicted, replay.result.steps)
    # the replay's requests/s at that speed is its mean rate (its requests over its 9 s) × speed
    assert replay.requests(speed) == pytest.approx(speed * sum(SECONDS) / len(SECONDS))
    shown = _cli("show", "--results", str(store.path)).stdout
    assert f"gunicorn-sync holds the traffic up to {speed:.3g}×" in shown
