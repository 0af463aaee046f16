"""A capacity load in the report, from synthetic stores: its capacity table (HTML and Markdown,
best first, instead of per-level tables), its steps in one line per server, its two charts (the
budget rule and each server's knee in the spec), and its finding."""

from __future__ import annotations

import json
import re

import pytest

from wsgibench.report import html, markdown, write_report
from wsgibench.report.capacity import row
from wsgibench.report.capacity import steps as capacity_steps
from wsgibench.report.capacity_charts import capacity_charts
from wsgibench.report.chart_parts import Palette
from wsgibench.report.charts import charts
from wsgibench.report.data import load_report_data
from wsgibench.report.findings import capacity_leader, findings
from wsgibench.report.table import load_table
from wsgibench.results.capacity import Budget, CapacityResult, Step, StepStatus, capacity_of
from wsgibench.results.capacity_read import CostPoint, ServerCapacity
from wsgibench.results.store import Store

from ..synthetic import build_capacity_store, build_store

# Knees in new connections/s (10 requests each): the search from 100/s at 5 % finds a at 975
# (9,750 req/s, below 10,000 that missed) and b at 288 (2,880 req/s, below 3,000).
KNEES = {"a": 1000.0, "b": 300.0}


@pytest.fixture
def store(tmp_path):
    path = build_capacity_store(tmp_path / "c.sqlite", KNEES, cpu_us={"a": 20.0, "b": 80.0})
    return Store(path, create=False)


def test_the_capacities_are_read_with_the_report_data(store):
    data = load_report_data(store)
    (load,) = data.loads
    assert load.is_capacity and load.model == "rate"  # its cells are the engine's rate steps
    found = data.capacities_of("p99-10ms")
    assert [c.server for c in found] == ["a", "b"]  # best first
    assert [row(c).interval for c in found] == ["9,750–10,000", "2,880–3,000"]
    a = row(found[0])
    assert (a.capacity, a.errors_from, a.cpu_half, a.cpu_full, a.stopped) == (
        "9,750",
        "10,000",
        "20",
        "20",
        "within 5%",
    )
    assert "capacity within p99 ≤ 10 ms" in data.meta.as_run()


def test_html_has_the_capacity_table_and_the_steps_folded_not_per_level_tables(store, tmp_path):
    files = write_report(store, tmp_path / "out", png=False)
    text = files.html.read_text()
    section = text[text.index("<table class=capacity>") : text.index("</details>")]
    assert section.index("<td class=l>a</td>") < section.index("<td class=l>b</td>")
    assert "9,750–10,000" in section and "2,880–3,000" in section and "within 5%" in section
    assert "CPU µs/request at 50 %" in section and "why the search stopped" in section
    assert "<details class=capacity-steps>" in section
    assert 'title="cell 1: met, p99 ≤ 2 ms in 2 repeats">1,000 ✓</span>' in section
    assert "Winners per metric" not in text  # no per-level summary table for the load
    cells = store.cells(1)
    details = text[text.index("Every cell with its raw record ids") :]
    assert all(f"<tr><td>{c.id}</td>" in details for c in cells)  # each step keeps its row
    assert 'id="chart-capacity-latency-p99-10ms"' in text
    assert 'id="chart-capacity-cpu-p99-10ms"' in text
    assert "throughput-p99-10ms" not in text


def test_markdown_has_the_capacity_table_steps_and_both_charts(store, tmp_path):
    md = write_report(store, tmp_path / "out", png=False).markdown.read_text()
    assert "### Load `p99-10ms` — capacity within p99 ≤ 10 ms, errors ≤ 5.0%" in md
    rows = [
        line for line in md.splitlines() if line.startswith("| a |") or line.startswith("| b |")
    ]
    assert rows == [
        "| a | 9,750 | 9,750–10,000 | 10,000 | 20 | 20 | 20.0 | 1 | within 5% |",
        "| b | 2,880 | 2,880–3,000 | 3,000 | 80 | 80 | 20.0 | 1 | within 5% |",
    ]
    steps = next(line for line in md.splitlines() if line.startswith("- b: "))
    assert steps.startswith("- b: 1,000 ✓ · 2,000 ✓ · 4,000 ✗ · 3,000 ✗ · 2,500 ✓")
    assert re.search(r"CPU cost cells \d+ \d+ \d+\)$", steps)
    assert "(charts/capacity-latency-p99-10ms.png)" in md
    assert "(charts/capacity-cpu-p99-10ms.png)" in md
    assert "leads with" not in md  # no per-level leader findings


def _views(spec, found=None):
    """Every view of a spec (layers, concatenations), flattened."""
    found = [] if found is None else found
    if isinstance(spec, dict):
        if "mark" in spec:
            found.append(spec)
        for value in spec.values():
            _views(value, found)
    elif isinstance(spec, list):
        for value in spec:
            _views(value, found)
    return found


def test_the_latency_chart_has_the_budget_rule_and_each_knee(store):
    data = load_report_data(store)
    made = charts(data)
    assert [c.slug for c in made] == ["capacity-latency-p99-10ms", "capacity-cpu-p99-10ms"]
    assert all(c.load == "p99-10ms" for c in made)
    # Altair numbers a named view ("budget-p99_1"): the name is what precedes the number.
    views = {re.sub(r"_\d+$", "", v.get("name", "")): v for v in _views(made[0].spec)}
    budget = views["budget-p99"]
    assert budget["mark"]["type"] == "rule" and budget["data"]["values"][0]["budget"] == 10
    assert budget["encoding"]["y"]["field"] == "budget"
    assert "budget-p50" not in views  # the budget has no p50
    for pname in ("p50", "p99"):
        knee = views[f"knee-{pname}"]
        assert knee["mark"]["type"] == "rule" and knee["encoding"]["x"]["field"] == "capacity"
        at = {k["server"]: k["capacity"] for k in knee["data"]["values"]}
        assert at == {"a 1.0": 9750.0, "b 1.0": 2880.0}
        ring = views[f"ring-{pname}"]
        assert {k["server"]: k[pname] for k in ring["data"]["values"]} == {
            "a 1.0": 2.0 if pname == "p99" else 0.5,
            "b 1.0": 2.0 if pname == "p99" else 0.5,
        }
    assert all(v["data"]["values"][0]["above"] for v in [views["interval-p99"]])
    text = json.dumps(made[0].spec)
    assert "offered load (requests/s)" in text and '"cell_id"' in text


def test_legends_read_as_the_lines_end_and_the_cpu_chart_is_per_share(store):
    data = load_report_data(store)
    latency, cpu = capacity_charts(data, Palette(data.labels()))
    domains = {
        tuple(v["encoding"]["color"]["scale"]["domain"])
        for v in _views(latency.spec)
        if "color" in v.get("encoding", {})
    }
    assert domains == {("a 1.0", "b 1.0")}  # one legend: a's line ends highest (latest rate)
    (line, *_) = _views(cpu.spec)
    assert line["encoding"]["color"]["scale"]["domain"] == ["b 1.0", "a 1.0"]  # b costs more
    rows = cpu.spec["data"]["values"]
    assert {r["share"] for r in rows if r["name"] == "b"} >= {0.25, 0.5, 0.75, 1.0}
    assert all(r["share"] <= 1 for r in rows)
    assert {round(r["value"]) for r in rows if r["name"] == "a"} == {20}


def test_the_finding_names_the_leader_by_how_much_and_the_cpu_at_capacity(store):
    data = load_report_data(store)
    (line,) = findings(data)
    assert line == (
        "p99-10ms (capacity within p99 ≤ 10 ms, errors ≤ 5.0%): a has the highest capacity, "
        "9,750 req/s (interval 9,750–10,000), 239% above b with 2,880 req/s (interval "
        "2,880–3,000) (apart beyond each one's ±10% search noise). CPU per request at capacity: "
        "a 20 µs, b 80 µs."
    )


def _capacity(server: str, capacity: float | None, above: float | None) -> ServerCapacity:
    result = CapacityResult(capacity, above, None, "within 5%")
    cost = (CostPoint(1.0, 31.0, 12.0),)
    return ServerCapacity("cap", server, Budget(10.0), 1, result, cost, 1)


def test_overlapping_intervals_are_not_distinguishable(store):
    load = load_report_data(store).loads[0]
    found = [_capacity("x", 1000.0, 1100.0), _capacity("y", 1050.0, None)]
    found.sort(key=lambda c: -(c.result.capacity or 0))
    text = capacity_leader(load, found)
    assert text is not None
    assert "y has the highest capacity, at least 1,050 req/s" in text
    assert "not distinguishable from x with 1,000 req/s (interval 1,000–1,100)" in text
    assert "% above" not in text
    touching = [_capacity("x", 1100.0, 1200.0), _capacity("y", 1000.0, 1100.0)]
    text = capacity_leader(load, touching) or ""
    # [1000, 1100) and [1100, 1200) share no rate, but within each search's ±10 % they do
    assert "not distinguishable from y" in text and "% above" not in text
    apart = [_capacity("x", 1400.0, 1500.0), _capacity("y", 1000.0, 1100.0)]
    text = capacity_leader(load, apart) or ""
    assert "40% above y" in text and "beyond each one's ±10% search noise" in text


def test_no_server_within_the_budget_is_said(store):
    load = load_report_data(store).loads[0]
    text = capacity_leader(load, [_capacity("x", None, 100.0)])
    assert text == (
        "p99-10ms (capacity within p99 ≤ 10 ms, errors ≤ 5.0%): no server met the budget at the "
        "lowest rate it tried."
    )


def test_an_engine_limited_search_is_a_lower_bound_in_requests_per_second(tmp_path):
    path = build_capacity_store(tmp_path / "i.sqlite", {"a": 1e9}, invalid_at=1600)
    data = load_report_data(Store(path, create=False))
    (found,) = data.capacities
    assert row(found).interval == "≥ 8,000"
    assert row(found).stopped == "invalid at 16,000 req/s: engine saturated"
    (line,) = findings(data)
    assert "a has the highest capacity, at least 8,000 req/s (invalid at 16,000 req/s" in line


def test_a_study_with_a_swept_load_and_a_capacity_load_renders_both(store, tmp_path):
    data = load_report_data(Store(build_store(tmp_path / "s.sqlite"), create=False))
    searched = load_report_data(store)
    data.loads += searched.loads
    data.capacities = searched.capacities
    made = charts(data)
    assert [c.slug for c in made if c.load == "p99-10ms"] == [
        "capacity-latency-p99-10ms",
        "capacity-cpu-p99-10ms",
    ]
    assert "throughput-closed" in {c.slug for c in made}
    tables = [load_table(load) for load in data.loads if not load.is_capacity]
    page = html.render(data, tables, made)
    assert page.index("<h2>Load “closed”</h2>") < page.index("<h2>Load “p99-10ms”")
    assert page.count("Winners per metric") == 1
    md = markdown.render(data, tables, made, "charts")
    assert md.index("### Load `closed`") < md.index("### Load `p99-10ms`")
    found = findings(data)
    assert any(line.startswith("closed, connections 16: gunicorn-gthread leads") for line in found)
    assert sum(line.startswith("p99-10ms (capacity within") for line in found) == 1


def test_a_server_that_tipped_says_so_in_why_the_search_stopped():
    steps = (
        Step(4000, StepStatus.MET, "p99 ≤ 2 ms in 5 repeats", served=4000.0),
        Step(8000, StepStatus.MISSED, "repeat 1: falling behind", served=3900.0),
        Step(4400, StepStatus.MISSED, "repeat 1: falling behind", served=3000.0),
    )
    result = CapacityResult(4000.0, 4400.0, None, "within 5%", steps=steps)
    found = ServerCapacity("cap", "x", Budget(10.0), 1, result, (), 1)
    assert row(found).stopped == (
        "within 5%; tipped: offered 4,400 req/s it served 3,000, 25% less than the 4,000 it met "
        "(once behind it falls further: its capacity can move between runs)"
    )
    held = CapacityResult(4000.0, 4400.0, None, "within 5%", steps=steps[:2])
    assert row(ServerCapacity("cap", "x", Budget(10.0), 1, held, (), 1)).stopped == "within 5%"


def test_a_step_run_again_is_said_in_why_the_search_stopped_and_marked_in_the_steps():
    busy = "load generator was the bottleneck: schedule lag p99 11079 us > 10000 us"
    steps = (
        Step(40, StepStatus.MET, "p99 2 ms over 5 repeats", cell_id=1),
        Step(80, StepStatus.INVALID, busy, harness=True, machine=True),
        Step(80, StepStatus.MET, "p99 3 ms over 5 repeats", cell_id=3),
        Step(160, StepStatus.MISSED, "p99 40 ms > 10 ms", cell_id=4),
    )
    result = capacity_of(steps, 1.0)
    found = ServerCapacity("cap", "x", Budget(10.0), 100, result, (), 1)
    assert (result.capacity, result.lower_bound) == (80, False)
    assert row(found).stopped == (
        f"within 100%; run again after the machine limited it: the step at 8,000 req/s ({busy})"
    )
    marks = capacity_steps(found)
    assert [m.text for m in marks] == ["4,000 ✓", "8,000 ?", "8,000 ✓", "16,000 ✗"]
    assert (
        marks[1].title
        == f"first run (its cell now the rerun's): invalid, {busy}; run again at once"
    )
    assert marks[2].title == "cell 3: met, p99 3 ms over 5 repeats"
