"""`wsgibench show` on a stored study: grouped by load and level, the ceiling first, servers by
throughput, within 120 columns, filters and the other formats carrying the same rows."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console

from wsgibench.cli.show import show
from wsgibench.errors import UsageError
from wsgibench.results.store import Store

from ..synthetic import build_store

SPEEDS = {
    "nginx-baseline": 20000.0,
    "waitress": 3000.0,
    "gunicorn-gthread": 5000.0,
    "bjoern": 9000.0,
}


def _show(tmp_path: Path, width: int | None = 120, **options) -> str:
    """`show` on a terminal `width` columns wide (None: into a file, tables whole)."""
    path = build_store(
        tmp_path / "s.sqlite", speeds=SPEEDS, levels=(4, 16, 64), disqualify=("waitress", 64)
    )
    out = io.StringIO()
    terminal = {"force_terminal": True, "color_system": None, "width": width} if width else {}
    show(Store(path, create=False, read_only=True), Console(file=out, **terminal), **options)
    return out.getvalue()


def _servers_in_order(text: str) -> list[list[str]]:
    """The server column of each table, top to bottom."""
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("┏"):
            current = []
            tables.append(current)
        elif line.startswith("│") and current is not None:
            current.append(line.split("│")[1].strip())
    return tables


def _tables_by_title(text: str) -> dict[str, list[list[str]]]:
    """Each table's server column, by its title (a part continued keeps its own title)."""
    found: dict[str, list[list[str]]] = {}
    title = ""
    for line in text.splitlines():
        if line.strip() and not line.startswith(("┏", "┃", "┡", "│", "└", " ")):
            title = line.strip()
        elif line.startswith("┏"):
            found.setdefault(title, [])
    servers = _servers_in_order(text)
    return dict(zip(found, servers, strict=True))


def test_fits_the_terminal_and_orders_each_level_by_throughput(tmp_path):
    text = _show(tmp_path)
    assert max(len(line) for line in text.splitlines()) <= 120
    tables = {t: s for t, s in _tables_by_title(text).items() if "continued" not in t}
    assert len(tables) == 3  # one per level (parts that continue one are extra)
    first, second, third = tables.values()
    for servers in (first, second):
        assert servers == ["▲ nginx-baseline (ceiling)", "bjoern", "gunicorn-gthread", "waitress"]
    # the disqualified server goes last and says why below the table
    assert third[-1] == "waitress"
    assert "waitress: disqualified: error rate 12.0% > 5% (reset 40)" in text
    assert "tags: DQ = disqualified" in text


# How the terminal table writes each number JSON carries (the same units, the table's rounding).
AS_SHOWN = {
    "req/s": "{:,.0f}",
    "req/CPU-s": "{:,.0f}",
    "cores": "{:.2f}",
    "cv %": "{:.1f}%",
    "p50 ms": "{:.2f}",
    "p99 ms": "{:.2f}",
    "replies p99 ms": "{:.2f}",
    "errors %": "{:.2f}%",
    "wrk err %": "{:.2f}%",
    "httperf err %": "{:.2f}%",
    "cpu %": "{:,.0f}",
    "MiB": "{:.1f}",
}


@pytest.mark.parametrize("width", [80, 120, 200, None])
@pytest.mark.parametrize("wide", [False, True])
def test_every_figure_is_whole_at_any_width(tmp_path, width, wide):
    # Every figure and name JSON holds appears whole in one cell of the table, however narrow
    # the terminal (a table too wide is split into parts, each repeating the server), and in a
    # file whole in one table; only prose (notes, behaviour, tags) may wrap.
    text = _show(tmp_path, width=width, wide=wide)
    if width:
        assert max(len(line) for line in text.splitlines()) <= width
    lines = [line for line in text.splitlines() if line.startswith("│")]
    cells = {c.strip() for line in lines for c in line.split("│")}
    rows = json.loads(_show(tmp_path, width=None, fmt="json", wide=wide))["cells"]
    checked = 0
    for r in rows:
        assert any(r["server"] in c for c in cells), r["server"]
        for column, spec in AS_SHOWN.items():
            if r.get(column) is not None:
                shown = spec.format(r[column])
                assert any(c == shown or c.startswith(shown + " ") for c in cells), (column, shown)
                checked += 1
        for column in ("iface", "version"):
            assert r[column] in cells, (column, r[column])
    assert checked >= len(rows) * 6


def test_json_and_csv_give_numbers_as_numbers(tmp_path):
    doc = json.loads(_show(tmp_path, fmt="json", servers={"bjoern"}))
    assert doc["study"]["name"] == "synthetic"
    cells = doc["cells"]
    assert [r["level"] for r in cells] == [4, 16, 64]
    assert all(isinstance(r[k], float) for r in cells for k in ("req/s", "p99 ms", "errors %"))
    assert cells[0]["req/s"] > 9000 and "," not in json.dumps(cells[0]["req/s"])
    rows = list(csv.DictReader(io.StringIO(_show(tmp_path, fmt="csv"))))
    assert {r["table"] for r in rows} == {"cells"} and len(rows) == 12
    assert rows[0]["server"] == "nginx-baseline" and rows[0]["ceiling"] == "True"
    assert float(rows[0]["req/s"]) > 20000


def test_filters_sort_and_formats(tmp_path):
    text = _show(tmp_path, levels={16.0}, servers={"waitress", "bjoern"}, sort="p99")
    assert _servers_in_order(text) == [["bjoern", "waitress"]]
    md = _show(tmp_path, fmt="md", levels={4.0})
    assert md.startswith("### closed · connections 4") and "| ▲ nginx-baseline (ceiling) |" in md


def test_a_filter_that_matches_nothing_is_an_error_naming_what_is_there(tmp_path):
    with pytest.raises(UsageError, match="no server waitres in study 1 .*did you mean waitress"):
        _show(tmp_path, servers={"waitres"})
    with pytest.raises(UsageError, match=r"no level 0 in study \d .*\(there: 4, 16, 64\)"):
        _show(tmp_path, levels={0.0})


def test_wide_shows_full_notes(tmp_path):
    text = _show(tmp_path, wide=True)
    assert "no pipelining: pipelined requests were not all answered" in text.replace("\n", " ")


def _set_totals(path: Path, server: str, **totals: int) -> None:
    """Give every stored repeat of a server these totals, each a multiple of its valid replies."""
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT r.id, r.engine_json FROM repeats r JOIN cells c ON c.id = r.cell_id "
            "WHERE c.server = ?",
            (server,),
        ).fetchall()
        for rid, raw in rows:
            doc = json.loads(raw)
            ok = doc["totals"]["ok"]
            doc["totals"].update({k: v * ok for k, v in totals.items()})
            db.execute("UPDATE repeats SET engine_json=? WHERE id=?", (json.dumps(doc), rid))


def test_wide_shows_errors_as_wrk_and_httperf_counted_them_beside_ours(tmp_path):
    path = build_store(tmp_path / "s.sqlite", speeds=SPEEDS, levels=(4, 16))
    _set_totals(path, "bjoern", unannounced_closes=1)  # one silent close per reply
    _set_totals(path, "waitress", connection_close_replies=1)  # one announced close per reply

    def rows(**options) -> dict[str, dict]:
        out = io.StringIO()
        show(Store(path, create=False, read_only=True), Console(file=out, width=240), **options)
        cells = json.loads(out.getvalue())["cells"]
        return {r["server"]: r for r in cells if r["level"] == 4}

    wide = rows(fmt="json", wide=True)
    # our count stays clean; wrk would have counted a read error per silent close
    columns = ("errors %", "wrk err %", "httperf err %")
    assert [wide["bjoern"][k] for k in columns] == [0.0, 50.0, 50.0]
    # an announced close: wrk reconnects quietly, httperf (no Connection header read) does not
    assert [wide["waitress"][k] for k in columns] == [0.0, 0.0, 50.0]
    assert wide["gunicorn-gthread"]["wrk err %"] == 0.0
    assert list(wide["bjoern"]).index("wrk err %") == list(wide["bjoern"]).index("errors %") + 1
    assert "wrk err %" not in rows(fmt="json")["bjoern"]  # the narrow table keeps to 120 columns
    out = io.StringIO()
    show(Store(path, create=False, read_only=True), Console(file=out, width=240), wide=True)
    assert (
        "wrk err" in out.getvalue()
        and "wrk (seeds 003, 004) and httperf (seed 000)" in out.getvalue()
    )
