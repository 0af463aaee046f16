"""Findings true by construction: a load's role is what the study declares, never guessed from its
keys; a framework's servers are ranked against their own ceiling (or it is said why there is
none), with the cells not ranked after them and their reasons; a broadcast is judged on delivery
latency and loss, never ranked by the publisher's fixed rate; "one server measured" is never said
where a second was measured but not cleanly."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from unit.synthetic_loads import Spec, build
from wsgibench.cli.show import groups
from wsgibench.report.charts import charts
from wsgibench.report.data import load_report_data
from wsgibench.report.findings import findings
from wsgibench.report.frameworks import sections
from wsgibench.report.html import render
from wsgibench.report.table import load_table
from wsgibench.results.store import Store
from wsgibench.results.summary import summarise_study

CLOSED = {"model": "closed", "levels": [32], "duration_s": 1.0}
SATURATED = "engine saturated: its threads were busy 99% of the time"
CONTENDED = "other work took 30% of the server's CPUs"


def _frameworks_store(tmp: Path, with_ceiling: bool = True) -> Path:
    loads = [
        {"name": "flask", "app": "flask", "role": "framework", **CLOSED},
        {"name": "django", "app": "django", "role": "framework", **CLOSED},
        {"name": "json", "app": "json", **CLOSED},  # an app of its own, no role: no framework
    ]
    cells = {
        ("flask", "a", 32): Spec(3000),
        ("flask", "b", 32): Spec(2000),
        ("flask", "c", 32): Spec(9000, status="invalid", reason=SATURATED),
        ("flask", "d", 32): Spec(8000, status="contended", reason=CONTENDED),
        ("django", "a", 32): Spec(1500),
        ("django", "b", 32): Spec(7000, status="invalid", reason=SATURATED),
        ("json", "a", 32): Spec(5000),
        ("json", "b", 32): Spec(4000),
    }
    if with_ceiling:
        loads.insert(0, {"name": "pong", "role": "ceiling", **CLOSED})
        cells |= {
            ("pong", "a", 32): Spec(10000),
            ("pong", "b", 32): Spec(12000, status="invalid", reason=SATURATED),
            ("pong", "c", 32): Spec(11000),
            ("pong", "d", 32): Spec(9000),
        }
    return build(tmp / "f.sqlite", loads, cells, name="frameworks")


def _data(path: Path):
    return load_report_data(Store(path, create=False, read_only=True))


def test_only_declared_framework_loads_are_ranked_against_their_ceiling(tmp_path: Path):
    data = _data(_frameworks_store(tmp_path))
    found = {s.framework: s for s in sections(data)}
    assert set(found) == {"flask", "django"}  # json has an app of its own but no role
    flask = found["flask"]
    assert [r.server for r in flask.rows] == ["a", "b"]
    assert [(u.server, u.status) for u in flask.unranked] == [("d", "contended"), ("c", "invalid")]
    a, b = flask.rows
    assert a.ceiling and a.share and round(a.share, 1) == 0.3
    assert b.ceiling is None and b.no_ceiling == f"its pong cell is invalid: {SATURATED}"
    assert "a leads with" in flask.finding and "of its own ceiling" in flask.finding
    assert f"not ranked: d (contended: {CONTENDED}), c (invalid: {SATURATED})" in flask.finding


def test_a_second_server_measured_but_not_cleanly_is_never_one_server_measured(tmp_path: Path):
    django = next(s for s in sections(_data(_frameworks_store(tmp_path))) if s.load == "django")
    assert "one server measured" not in django.finding
    assert "the only server with a clean measurement, nothing to rank" in django.finding
    assert f"not ranked: b (invalid: {SATURATED})" in django.finding


def test_a_missing_ceiling_says_why(tmp_path: Path):
    data = _data(_frameworks_store(tmp_path, with_ceiling=False))
    flask = next(s for s in sections(data) if s.load == "flask")
    why = 'the study declares no ceiling load (role = "ceiling")'
    assert all(r.ceiling is None and r.no_ceiling == why for r in flask.rows)
    assert f"(no ceiling of its own: {why})" in flask.finding


def test_cells_not_clean_follow_the_measured_ones_in_every_table(tmp_path: Path):
    path = _frameworks_store(tmp_path)
    data = _data(path)
    for load in data.loads:
        rows = load_table(load).rows
        clean = [r.status == "ok" for r in rows]
        assert clean == sorted(clean, reverse=True), (load.name, [r.status for r in rows])
    flask = next(load for load in data.loads if load.name == "flask")
    assert [r.server for r in load_table(flask).rows] == ["a", "b", "c", "d"]
    pong = next(load for load in data.loads if load.name == "pong")
    assert load_table(pong).rows[-1].server == "b"  # invalid at 12,000: last, not the head
    store = Store(path, create=False, read_only=True)
    for group in groups(summarise_study(store, data.meta.id)):
        statuses = [s.cell.status == "measured" for s in group.cells]
        assert statuses == sorted(statuses, reverse=True), group.title
    html = render(data, [load_table(load) for load in data.loads], [])
    flask = html.split("<h3>flask")[1].split("</table>")[0]
    assert flask.index(">a<") < flask.index(">b<") < flask.index(">d<") < flask.index(">c<")
    assert f"not ranked: contended</span>: {escape(CONTENDED)}" in flask
    assert f"none: its pong cell is invalid: {SATURATED}" in flask


def test_the_headline_chart_has_every_framework_beside_the_ceiling(tmp_path: Path):
    made = charts(_data(_frameworks_store(tmp_path)))
    head = made[0]
    assert head.slug == "frameworks"
    panels = head.spec["facet"]["sort"] if "facet" in head.spec else head.spec["spec"]
    assert panels == ["pong (ceiling)", "flask", "django"]
    values = head.spec["data"]["values"]
    assert {(v["panel"], v["name"]) for v in values} == {
        ("pong (ceiling)", "a"),
        ("pong (ceiling)", "c"),
        ("pong (ceiling)", "d"),
        ("flask", "a"),
        ("flask", "b"),
        ("django", "a"),
    }  # clean measurements only


def _websockets_store(tmp: Path) -> Path:
    loads = [
        {"name": "echo", "role": "echo", "protocol": "websocket", **CLOSED},
        {
            "name": "broadcast",
            "model": "broadcast",
            "app": "ws_broadcast",
            "protocol": "websocket",
            "levels": [100],
            "publish_rate": 20.0,
            "duration_s": 5.0,
        },
    ]
    cells = {
        ("echo", "granian-asgi", 32): Spec(9500),
        ("echo", "uvicorn", 32): Spec(6000),
        # the same fixed 2,000 deliveries/s to each; uvicorn's latency lower, daphne's losses
        ("broadcast", "granian-asgi", 100): Spec(2000, p99=9000),
        ("broadcast", "uvicorn", 100): Spec(2000, p99=3000),
        ("broadcast", "daphne", 100): Spec(2000, p99=20000, lost=7),
    }
    return build(tmp / "w.sqlite", loads, cells, name="websockets")


def test_a_broadcast_is_judged_on_delivery_latency_and_loss_never_its_rate(tmp_path: Path):
    data = _data(_websockets_store(tmp_path))
    lines = findings(data)
    assert not sections(data) and not any("ceiling" in line for line in lines), lines
    said = next(line for line in lines if line.startswith("broadcast,"))
    assert "leads" not in said and "req/s" not in said
    assert (
        "the publisher's 20 messages/s to each subscriber, so deliveries per second rank none"
        in (said)
    )
    latency = re.findall(r"(\S+) (\d+\.\d\d) ms", said)
    assert [server for server, _ in latency] == ["uvicorn", "granian-asgi", "daphne"], said
    assert [round(float(ms)) for _, ms in latency] == [3, 9, 20]
    assert "uvicorn lowest, ahead of granian-asgi (p = " in said
    assert re.search(r"daphne 21 lost and 0 corrupt of [\d,]+ due \(0\.3\d\d%\)", said), said
    echo = [line for line in lines if line.startswith("echo,")]
    assert echo and all("echoes/s" in line and "req/s" not in line for line in echo), echo
    table = load_table(next(load for load in data.loads if load.name == "broadcast"))
    assert "throughput" not in {w.metric.key for w in table.winners}
    assert [r.server for r in table.rows] == ["uvicorn", "granian-asgi", "daphne"]


def test_servers_not_ranked_for_one_reason_are_named_together(tmp_path: Path):
    loads = [{"name": "flask", "app": "flask", "role": "framework", **CLOSED}]
    cells = {
        ("flask", "a", 32): Spec(3000),
        ("flask", "b", 32): Spec(2000),
        ("flask", "c", 32): Spec(9000, status="invalid", reason=SATURATED),
        ("flask", "d", 32): Spec(9000, status="invalid", reason=SATURATED),
    }
    flask = sections(_data(build(tmp_path / "g.sqlite", loads, cells)))[0]
    assert flask.finding.count(SATURATED) == 1
    assert f"not ranked: c, d (invalid: {SATURATED})." in flask.finding
