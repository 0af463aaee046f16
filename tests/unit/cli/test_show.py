"""`wsgibench show` on a stored study: grouped by load and level, the ceiling first, servers by
throughput, within 120 columns, filters and the other formats carrying the same rows."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from rich.console import Console

from wsgibench.cli.show import show
from wsgibench.results.store import Store

from ..synthetic import build_store

SPEEDS = {
    "nginx-baseline": 20000.0,
    "waitress": 3000.0,
    "gunicorn-gthread": 5000.0,
    "bjoern": 9000.0,
}


def _show(tmp_path: Path, **options) -> str:
    path = build_store(
        tmp_path / "s.sqlite", speeds=SPEEDS, levels=(4, 16, 64), disqualify=("waitress", 64)
    )
    out = io.StringIO()
    show(Store(path, create=False, read_only=True), Console(file=out, width=240), **options)
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


def test_fits_120_columns_and_orders_each_level_by_throughput(tmp_path):
    text = _show(tmp_path)
    assert max(len(line) for line in text.splitlines()) <= 120
    tables = _servers_in_order(text)
    assert len(tables) == 3  # one per level
    for servers in tables[:2]:
        assert servers == ["▲ nginx-baseline (ceiling)", "bjoern", "gunicorn-gthread", "waitress"]
    # the disqualified server goes last and says why below the table
    assert tables[2][-1] == "waitress"
    assert "waitress: disqualified: error rate 12.0% > 5% (reset 40)" in text
    assert "tags: DQ = disqualified" in text


def test_filters_sort_and_formats(tmp_path):
    text = _show(tmp_path, levels={16.0}, servers={"waitress", "bjoern"}, sort="p99")
    assert _servers_in_order(text) == [["bjoern", "waitress"]]
    md = _show(tmp_path, fmt="md", levels={4.0})
    assert md.startswith("### closed · connections 4") and "| ▲ nginx-baseline (ceiling) |" in md
    rows = list(csv.DictReader(io.StringIO(_show(tmp_path, fmt="csv"))))
    assert len(rows) == 12 and rows[0]["server"].startswith("▲ nginx-baseline")
    doc = json.loads(_show(tmp_path, fmt="json", servers={"bjoern"}))
    assert [r["level"] for r in doc] == [4, 16, 64] and doc[0]["req/s"]


def test_wide_shows_full_notes(tmp_path):
    text = _show(tmp_path, wide=True)
    assert "no pipelining: pipelined requests were not all answered" in text
