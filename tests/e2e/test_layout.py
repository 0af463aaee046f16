"""The CPU layout on this machine, end to end: the engine runs one thread per engine CPU, each
pinned and its mask read back from the kernel (not the plan's copy), each thread doing its share,
and the store says which CPUs each side had, by which rule, on which topology."""

from __future__ import annotations

import json
from pathlib import Path

from wsgibench.results.store import Store
from wsgibench.run.study import StudyRunner
from wsgibench.study.model import parse_study

from .helpers import require


def test_the_engine_gets_a_thread_per_engine_cpu_and_the_layout_is_stored(tmp_path: Path):
    require("wsgiref")
    study = parse_study(
        {
            "name": "layout",
            "servers": ["wsgiref"],
            "repeats": 1,
            "load": [
                {"name": "c", "model": "closed", "levels": [2], "duration_s": 0.5, "warmup_s": 0}
            ],
        },
        "layout",
    )
    store = Store(tmp_path / "r.sqlite")
    runner = StudyRunner(study, store)
    study_id = runner.run()
    env = json.loads(store.study(study_id)["environment_json"])
    (cell,) = store.cells(study_id)
    (rep,) = store.repeats(cell.id)
    engine = json.loads(rep["engine_json"])
    engine_cpus = runner.layout.engine_cpus
    assert engine["plan"]["cpus"] == engine_cpus
    # What each engine thread got, as it read its own mask back from the kernel: one thread per
    # engine CPU, each on its own CPU (a single thread on the whole set), every one of them
    # answered (a thread that never ran would have no replies), adding up to the run's.
    got = sorted(engine["cost"]["thread_cpus"], key=lambda t: t["thread"])
    assert [t["thread"] for t in got] == list(range(len(engine_cpus))), got
    if len(engine_cpus) == 1:
        assert got[0]["cpus"] == engine_cpus, got
    else:
        assert [t["cpus"] for t in got] == [[c] for c in engine_cpus], got
    assert all(t["responses"] > 0 and t["cpu_s"] > 0 for t in got), got
    assert sum(t["responses"] for t in got) == engine["totals"]["responses"]
    layout = cell.isolation["layout"]
    assert layout["engine_threads"] == len(engine_cpus) and layout["engine_cpus"] == engine_cpus
    assert layout["server_cpus"] == runner.layout.server_cpus == cell.isolation["server_cpus"]
    assert layout["policy"] == runner.layout.policy == env["layout"]["policy"]
    assert env["topology"]["cpus"] == sorted(set(env["cpus_usable"]))
    assert len(env["topology"]["cores"]) >= 1 and env["topology"]["nodes"]
