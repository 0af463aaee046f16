"""A load picks the engine's I/O backend (`engine_io`): each cell runs on the one it asked for and
records it; the default runs on io_uring where the kernel offers it; a backend that does not
exist is one line."""

from __future__ import annotations

import json
import subprocess

from wsgibench.results.store import Store

from .helpers import cli, expect_measured, require

SERVER = "gunicorn-gthread"


def _study(folder, loads: str) -> str:
    path = folder / "io.toml"
    path.write_text(f"""
name = "io"
servers = ["{SERVER}"]
repeats = 1
{loads}
""")
    return str(path)


def _load(name: str, engine_io: str | None) -> str:
    chosen = f'engine_io = "{engine_io}"' if engine_io else ""
    return f"""
[[load]]
name = "{name}"
model = "closed"
levels = [8]
duration_s = 1.0
warmup_s = 0.2
{chosen}
"""


def test_each_load_runs_on_the_backend_it_names(tmp_path):
    require(SERVER)
    study = _study(
        tmp_path, _load("on-epoll", "epoll") + _load("on-uring", "io_uring") + _load("auto", None)
    )
    results = tmp_path / "r.sqlite"
    proc = subprocess.run(
        cli("run", study, "--results", str(results), "--no-report"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    store = Store(results, create=False)
    seen = {}
    for cell in store.cells(store.study()["id"]):
        expect_measured(cell, cell.load)
        (rep,) = store.repeats(cell.id)
        engine = json.loads(rep["engine_json"])
        assert rep["ok"] > 100 and rep["errors"] == 0, engine["totals"]
        cost = engine["cost"]
        assert cost["syscalls"] > 0 and cost["responses_per_cpu_s"] > 0, cost
        seen[cell.load] = (engine["plan"].get("engine_io", "auto"), cost["io_backend"])
    assert seen["on-epoll"] == ("epoll", "epoll")
    assert seen["on-uring"] == ("io_uring", "io_uring")
    # This project's machines offer io_uring: auto takes it (elsewhere io_note says why not).
    assert seen["auto"] == ("auto", "io_uring")


def test_an_unknown_backend_is_one_line(tmp_path):
    study = _study(tmp_path, _load("bad", "kqueue"))
    proc = subprocess.run(
        cli("run", study, "--results", str(tmp_path / "r.sqlite"), "--no-install"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "engine_io" in lines[0] and "kqueue" in lines[0], proc.stderr
