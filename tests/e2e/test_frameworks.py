"""The frameworks study at a small size, through the installed `wsgibench` script: every framework
(Flask, Django, FastAPI, Starlette, Falcon, Litestar) on at least two servers, every endpoint
measured with zero invalid replies, pong beside them as each server's ceiling, and the report's
section that ranks the servers per framework."""

from __future__ import annotations

import json
import statistics
import subprocess
from pathlib import Path

from wsgibench.report.data import load_report_data
from wsgibench.report.frameworks import sections
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.store import Store
from wsgibench.study.frameworks import FRAMEWORKS

from .helpers import cli, expect_measured, require
from .procs import none_left
from .quiet import busy_said

SERVERS = ("gunicorn-gthread", "waitress", "uvicorn", "hypercorn")
ENDPOINTS = ["plaintext", "json", "db", "echo"]


def test_every_framework_on_two_servers_every_endpoint_valid(tmp_path: Path, own_tag: str):
    for name in SERVERS:
        require(name)
    argv = cli(
        "run",
        "frameworks",
        "--servers",
        ",".join(SERVERS),
        "--duration",
        "0.5",
        "--repeats",
        "2",
        "--results",
        "r.sqlite",
        "--no-install",
    )
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "internal error" not in said, said[-3000:]
    store = Store(tmp_path / "r.sqlite", read_only=True)
    study_id = store.study(None)["id"]
    on: dict[str, set[str]] = {}
    for cell in store.cells(study_id):
        expect_measured(cell, cell.server, cell.load)
        for row in store.repeats(cell.id):
            result = EngineResult.from_dict(json.loads(row["engine_json"]))
            if cell.load == "pong":
                continue
            assert [k.name for k in result.kinds] == ENDPOINTS
            for kind in result.kinds:
                assert kind.ok > 0, (cell.server, cell.load, kind.name)
                assert sum(kind.errors.values()) == 0, (cell.server, cell.load, kind.errors)
        on.setdefault(cell.load, set()).add(cell.server)
    assert {f.name for f in FRAMEWORKS} <= set(on)
    assert all(len(on[f.name]) >= 2 for f in FRAMEWORKS), on
    assert on["pong"] == set(SERVERS)
    found = {s.framework: s for s in sections(load_report_data(store, study_id))}
    assert set(found) == {f.name for f in FRAMEWORKS}
    medians = _medians(store, study_id)
    for section in found.values():
        _rows_are_the_stores(section, medians)
        _unranked_are_the_stores(section, store, study_id)
    html = (tmp_path / "r-report" / "report.html").read_text()
    assert "Frameworks on servers" in html
    assert none_left(own_tag) == []  # of the processes this test started


def _medians(store: Store, study_id: int) -> dict[tuple[str, str, float], tuple[float, ...]]:
    """Each measured cell's (load, server, level): its repeats' valid replies per second, as the
    store holds them, read apart from the report's code."""
    out = {}
    for cell in store.cells(study_id):
        if cell.status == "measured":
            values = tuple(float(r["rps_ok"]) for r in store.repeats(cell.id))
            out[(cell.load, cell.server, cell.level)] = values
    return out


def _rows_are_the_stores(section, medians) -> None:
    """The section's rows are the framework's measured servers at its level, each with the
    median, slowest and fastest of its stored repeats, its own pong cell's median as its
    ceiling, best first; the finding names the best and its rate."""
    level = section.level
    mine = {
        server: v
        for (load, server, lv), v in medians.items()
        if (load, lv) == (section.load, level)
    }
    assert {r.server for r in section.rows} == set(mine), (section, mine)
    for row in section.rows:
        values = mine[row.server]
        assert row.rps == statistics.median(values), (row, values)
        assert (row.low, row.high) == (min(values), max(values)), (row, values)
        pong = medians.get(("pong", row.server, level))
        if pong is None:  # its pong cell not measured (contended, say): no ceiling, and why
            assert row.ceiling is None and row.no_ceiling.startswith("its pong cell is "), row
            continue
        assert row.ceiling == statistics.median(pong), row
        assert row.share == row.rps / row.ceiling
    rates = [r.rps for r in section.rows]
    assert rates == sorted(rates, reverse=True), rates
    best = section.rows[0]
    assert section.finding.startswith(
        f"{section.framework} (connections {level:g}): {best.server} leads with "
    ), section.finding
    if len(section.rows) == 1:  # the other server's cell the machine took: nothing ranked
        assert "the only server with a clean measurement, nothing to rank" in section.finding


def _unranked_are_the_stores(section, store: Store, study_id: int) -> None:
    """Every server of the framework's level is ranked or named as not ranked with the status
    and reason the store holds; at least two are ranked unless the tool judged the others the
    machine's (contended, or the engine starved), which the finding then names."""
    cells = {
        c.server: c
        for c in store.cells(study_id)
        if (c.load, c.level) == (section.load, section.level)
    }
    ranked = {r.server for r in section.rows}
    assert ranked | {u.server for u in section.unranked} == set(cells), (section, cells)
    for u in section.unranked:
        cell = cells[u.server]
        assert (u.status, u.reason) == (str(cell.status), cell.reason or ""), (u, cell)
        assert busy_said(cell.status, cell.reason), (u, cell)  # nothing else may keep it out
        assert u.server in section.finding, section.finding
    assert len(ranked) >= 2 or section.unranked, section
