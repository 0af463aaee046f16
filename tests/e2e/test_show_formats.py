"""`show` of a real run through the installed script: JSON and CSV give numbers as numbers and
carry the per-kind table; Markdown has every table; on a terminal 80, 120 or 200 columns wide
every figure JSON holds appears whole in the table (the terminal emulated by a pty)."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import pty
import struct
import subprocess
import termios
from pathlib import Path

import pytest

from .helpers import cli, require

STUDY = """
name = "formats"
servers = ["waitress", "werkzeug"]
app = "pong"
repeats = 1

[[requests]]
name = "often"
path = "/"
weight = 1.0

[[requests]]
name = "rarely"
path = "/"
weight = 0.25

[[load]]
name = "closed"
model = "closed"
levels = [4]
duration_s = 0.5
"""
# How the table writes each number JSON carries.
AS_SHOWN = {"req/s": "{:,.0f}", "p50 ms": "{:.2f}", "p99 ms": "{:.2f}", "errors %": "{:.2f}%"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for name in ("waitress", "werkzeug"):
        require(name)
    folder = tmp_path_factory.mktemp("formats")
    (folder / "formats.toml").write_text(STUDY)
    argv = cli("run", "formats.toml", "--results", "r.sqlite", "--no-report", "--no-install")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=folder)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return folder / "r.sqlite"


def _show(store: Path, *args: str) -> str:
    proc = subprocess.run(cli("show", str(store), *args), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _on_a_terminal(store: Path, columns: int) -> str:
    """`show` as a terminal `columns` wide shows it."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "dumb", "NO_COLOR": "1"}
    proc = subprocess.Popen(cli("show", str(store)), stdout=side, stderr=side, env=env)
    os.close(side)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(main)
    return b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")


def test_json_and_csv_give_numbers_and_every_table(store: Path):
    doc = json.loads(_show(store, "--format", "json"))
    cells = doc["cells"]
    assert {c["server"] for c in cells} == {"waitress", "werkzeug"}
    for c in cells:
        assert isinstance(c["req/s"], float) and c["req/s"] > 0, c
        assert isinstance(c["p99 ms"], float) and isinstance(c["errors %"], float), c
    kinds = doc["kinds"]
    assert {k["kind"] for k in kinds} == {"often", "rarely"}
    assert all(isinstance(k["requests"], int) and k["requests"] > 0 for k in kinds)
    rows = list(csv.DictReader(io.StringIO(_show(store, "--format", "csv"))))
    assert {r["table"] for r in rows} == {"cells", "kinds"}
    assert all(float(r["req/s"]) > 0 for r in rows if r["table"] == "cells")
    md = _show(store, "--format", "md")
    assert "### closed · connections 4" in md and "per request kind" in md


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_every_figure_is_whole_at_any_width(store: Path, columns: int):
    text = _on_a_terminal(store, columns)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= columns, text
    cells = {c.strip() for line in lines for c in line.split("│")}
    doc = json.loads(_show(store, "--format", "json"))
    for row in [*doc["cells"], *doc["kinds"]]:
        assert row["server"] in cells, (row["server"], text)
        for column, spec in AS_SHOWN.items():
            if row.get(column) is not None:
                shown = spec.format(row[column])
                assert any(c == shown or c.startswith(shown + " ") for c in cells), (
                    column,
                    shown,
                    text,
                )
