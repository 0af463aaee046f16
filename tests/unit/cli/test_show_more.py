"""`show`'s tables beyond the cells in every format: a capacity load's capacities and steps, a
tuning's trials, the verdicts against the seed; numbers as numbers in JSON and CSV, and every
figure whole in the terminal at any width."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from wsgibench.cli.show import show
from wsgibench.results.store import Store
from wsgibench.results.tuning import TrialRecord, TuneRecord, save_tuning

from ..synthetic import build_capacity_store, build_store


def _out(path: Path, width: int | None = 200, **options) -> str:
    out = io.StringIO()
    terminal = {"force_terminal": True, "color_system": None, "width": width} if width else {}
    show(Store(path, create=False, read_only=True), Console(file=out, **terminal), **options)
    return out.getvalue()


@pytest.fixture
def capacity(tmp_path: Path) -> Path:
    return build_capacity_store(tmp_path / "c.sqlite", {"bjoern-long-name": 4000.0, "w": 900.0})


def test_capacity_and_its_steps_in_every_format(capacity):
    doc = json.loads(_out(capacity, fmt="json"))
    caps = {r["server"]: r for r in doc["capacity"]}
    assert isinstance(caps["bjoern-long-name"]["capacity req/s"], float)
    assert caps["bjoern-long-name"]["capacity req/s"] > caps["w"]["capacity req/s"]
    steps = [r for r in doc["steps"] if r["server"] == "w"]
    assert [r["step"] for r in steps] == list(range(1, len(steps) + 1))
    assert {r["verdict"] for r in steps} == {"met", "missed"} and all(r["why"] for r in steps)
    rows = list(csv.DictReader(io.StringIO(_out(capacity, fmt="csv"))))
    assert {"cells", "capacity", "steps"} <= {r["table"] for r in rows}
    md = _out(capacity, fmt="md", steps=True)
    assert "### p99-10ms · capacity within p99 ≤ 10 ms" in md and "the search's steps" in md
    assert "the search's steps" not in _out(capacity, fmt="md")


@pytest.mark.parametrize("width", [80, 120, 200])
def test_steps_are_listed_whole_with_met_or_missed(capacity, width):
    text = _out(capacity, width=width, steps=True)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "p99-10ms · the search's steps" in text and "✓ met" in text and "✗ missed" in text
    cells = {c.strip() for line in text.splitlines() for c in line.split("│")}
    assert "bjoern-long-name" in cells  # never cut
    doc = json.loads(_out(capacity, fmt="json"))
    for r in doc["capacity"]:
        assert f"{r['capacity req/s']:,.0f}" in cells, r
    assert "the search's steps" not in _out(capacity, width=width)


def test_a_tuning_is_in_every_format(tmp_path):
    path = build_store(tmp_path / "t.sqlite", speeds={"gunicorn-gthread": 100.0}, levels=(4,))
    store = Store(path)
    trials = (
        TrialRecord("gunicorn-gthread w1 t1", 1, 20.0, 22.0, 2087.0, 49.0),
        TrialRecord("gunicorn-gthread w1 t8", 1, 140.0, 160.0, 1416.0, 49.0),
    )
    record = TuneRecord(
        "gunicorn-gthread", "p99 ≤ 200 ms", (1,), trials, "gunicorn-gthread w1 t8",
        "gunicorn --threads 8 app:app", "one setting left",
    )  # fmt: skip
    save_tuning(store, record)
    store.close()
    doc = json.loads(_out(path, fmt="json"))
    assert [r["capacity req/s"] for r in doc["tuning"]] == [140.0, 20.0]
    assert doc["tuning"][0]["winner"] and doc["tuning_winner"]["command"].startswith("gunicorn")
    assert "### tune gunicorn-gthread" in _out(path, fmt="md")
    assert "tuning" in {r["table"] for r in csv.DictReader(io.StringIO(_out(path, fmt="csv")))}
    assert "gunicorn-gthread w1 t8" in _out(path, width=80)


def test_the_verdicts_against_the_seed_are_in_every_format(tmp_path):
    path = build_store(tmp_path / "s.sqlite", {"bjoern": 9000.0}, name="seed003", jitter=0)
    doc = json.loads(_out(path, fmt="json"))
    assert doc["seed"] and {"claim", "verdict", "why"} <= set(doc["seed"][0])
    assert "### seed003 against its seed" in _out(path, fmt="md")
    assert "seed003 against its seed" in _out(path, width=120)
