"""Other work on the study's CPUs is measured, not guessed: a busy process on the server's CPU
flags the cell `contended` with the figure; one on the engine's CPU starves the engine, which
makes the repeat saturated and the cell invalid."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from wsgibench.results.store import Store
from wsgibench.run.study import StudyRunner
from wsgibench.study.model import parse_study

from .helpers import require

CPUS = sorted(os.sched_getaffinity(0))[:2]


@contextmanager
def busy_on(cpu: int) -> Iterator[None]:
    """A process spinning on one CPU for as long as the block runs."""
    code = f"import os\nos.sched_setaffinity(0, [{cpu}])\nwhile True:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        yield
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _cell(tmp_path: Path, server: str, connections: int):
    require(server)
    assert len(CPUS) == 2, "these tests need two CPUs: one for the server, one for the engine"
    study = parse_study(
        {
            "name": "interference",
            "servers": [server],
            "repeats": 1,
            "server_cpus": [CPUS[0]],
            "engine_cpus": [CPUS[1]],
            "load": [
                {
                    "name": "closed",
                    "model": "closed",
                    "levels": [connections],
                    "duration_s": 2,
                    "warmup_s": 0,
                }
            ],
        },
        "interference",
    )
    store = Store(tmp_path / "r.sqlite")
    study_id = StudyRunner(study, store).run()
    (cell,) = store.cells(study_id)
    (rep,) = store.repeats(cell.id)
    return cell, rep


def test_a_busy_process_on_the_servers_cpu_flags_the_cell_contended(tmp_path: Path):
    with busy_on(CPUS[0]):
        cell, rep = _cell(tmp_path, "wsgiref", 4)
    use = json.loads(rep["extra_json"])["interference"]
    assert use["server"]["other_pct"] > 20, use
    contended = [d for d in cell.diagnoses if d["code"] == "contended"]
    assert contended and f"server CPUs ({CPUS[0]},)" in contended[0]["message"], cell.diagnoses


def test_a_busy_process_on_the_engines_cpu_starves_it(tmp_path: Path):
    with busy_on(CPUS[1]):
        cell, rep = _cell(tmp_path, "nginx-baseline", 50)
    assert rep["saturated"] == 1
    assert cell.status == "invalid", (cell.status, cell.reason)
    assert "engine starved" in cell.reason
    assert "engine-saturated" in {d["code"] for d in cell.diagnoses}
