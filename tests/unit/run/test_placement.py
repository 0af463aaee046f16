"""Where a cell's server and engine run on a bigger machine: the layout, the workers each server's
convention gives, one engine thread per engine CPU, and the plan the engine gets."""

from __future__ import annotations

from pathlib import Path

from wsgibench.databases import LoadDatabase
from wsgibench.machine.cpustat import CpuTimes
from wsgibench.machine.topology import build, layout
from wsgibench.run.cell import CellContext, measure, place
from wsgibench.run.checks import Capabilities
from wsgibench.servers import get
from wsgibench.study.model import parse_study
from wsgibench.study.plan import plan_cells

from .fakes import FakeEngine, FakeServer, result

SIXTEEN = build(list(range(16)), [(c,) for c in range(16)], [tuple(range(16))])
LOAD = {"name": "c", "model": "closed", "levels": [64], "duration_s": 1}
GOOD = Capabilities(pong=True, http10=True, keep_alive=True, pipelining=True, detail="")


def _study(**extra):
    return parse_study({"servers": ["gunicorn-sync"], "load": [LOAD], **extra}, "placement")


def test_auto_workers_follow_each_servers_convention():
    study, lay = _study(workers="auto"), layout(SIXTEEN)
    load = study.loads[0]
    gunicorn = place(load, study, get("gunicorn-sync"), lay, SIXTEEN)
    assert (gunicorn.server_cpus, gunicorn.engine_cpus) == (list(range(8)), list(range(8, 16)))
    assert gunicorn.workers == 17 and "(2 x 8 CPUs) + 1" in gunicorn.workers_rule
    assert place(load, study, get("uwsgi-http11"), lay, SIXTEEN).workers == 8
    assert place(load, study, get("granian"), lay, SIXTEEN).workers == 8
    single = place(load, study, get("waitress"), lay, SIXTEEN)
    assert single.workers == 1 and "one process" in single.workers_rule


def test_exact_workers_are_kept_but_the_ceiling_follows_the_cpus():
    study, lay = _study(workers=3), layout(SIXTEEN)
    load = study.loads[0]
    assert place(load, study, get("gunicorn-sync"), lay, SIXTEEN).workers == 3
    nginx = place(load, study, get("nginx-baseline"), lay, SIXTEEN)
    assert nginx.workers == 8 and nginx.workers_rule == "one worker per server CPU (8)"


def _plans_given(study, placed) -> list:
    """The plans the cell's own measuring gave the engine (a fake that records them), placed as
    `placed` on the sixteen CPUs: what the engine was asked for, not what the test passed in."""
    engine = FakeEngine([result(ok=10_000, mean_us=1000)])
    idle = CpuTimes(dict.fromkeys(range(16), 0.0), dict.fromkeys(range(16), 0.0))
    ctx = CellContext(
        study,
        engine,
        LoadDatabase(Path("unused")),
        layout(SIXTEEN),
        SIXTEEN,
        cpu_times=lambda: idle,
    )
    measure(plan_cells(study)[0], FakeServer(), GOOD, ctx, placed)
    return engine.plans


def test_one_engine_thread_per_engine_cpu_unless_the_study_says():
    lay = layout(SIXTEEN)
    study = _study()
    placed = place(study.loads[0], study, get("gunicorn-sync"), lay, SIXTEEN)
    assert placed.engine_cpus == list(range(8, 16)) and placed.engine_threads == 8
    plans = _plans_given(study, placed)  # the warm-up and each repeat
    assert len(plans) == 1 + study.repeats
    assert {(p.threads, tuple(p.cpus or ())) for p in plans} == {(8, tuple(range(8, 16)))}
    fixed = _study(engine_threads=2)
    two = place(fixed.loads[0], fixed, get("gunicorn-sync"), lay, SIXTEEN)
    assert two.engine_threads == 2 and two.engine_cpus == list(range(8, 16))
    assert {(p.threads, tuple(p.cpus or ())) for p in _plans_given(fixed, two)} == {
        (2, tuple(range(8, 16)))
    }


def test_two_cpus_keep_todays_layout():
    two = build([0, 1], [(0,), (1,)], [(0, 1)])
    study = _study()
    placed = place(study.loads[0], study, get("gunicorn-sync"), layout(two), two)
    assert (placed.server_cpus, placed.engine_cpus, placed.engine_threads) == ([0], [1], 1)
    assert placed.policy == "first-cpu" and placed.shared is None


def _placed(placement: dict, **study):
    s = parse_study(
        {"servers": ["granian-asgi"], "load": [{**LOAD, **placement}], "workers": 1, **study}, "p"
    )
    from wsgibench.machine.topology import scaled_layout

    lay = scaled_layout(SIXTEEN, 1) if study.get("server_cpu_count") else layout(SIXTEEN)
    return place(s.loads[0], s, get("granian-asgi"), lay, SIXTEEN)


def test_shared_and_quota_placements_leave_the_engine_its_half_and_the_workers_as_pinned():
    pinned = _placed({}, server_cpu_count=1)
    assert (pinned.server_cpus, pinned.mode, pinned.cpu_quota) == ([0], "pinned", None)
    assert len(pinned.engine_cpus) == 15
    shared = _placed({"placement": "shared"}, server_cpu_count=1)
    assert shared.server_cpus == list(range(8)) and shared.engine_cpus == list(range(8, 16))
    assert shared.workers == pinned.workers == 1 and shared.engine_threads == 8
    assert shared.mode_note and "may run on CPU(s) [0, 1, 2" in shared.mode_note
    assert shared.as_dict()["placement"] == "shared"
    quota = _placed({"placement": "quota"}, server_cpu_count=1)
    assert quota.cpu_quota == 1.0 and quota.server_cpus == shared.server_cpus
    half = _placed({"placement": "quota", "cpu_quota": 0.5})
    assert half.cpu_quota == 0.5 and half.as_dict()["cpu_quota"] == 0.5


def test_shared_on_a_machine_whose_layout_leaves_nothing_over_says_it_is_pinned_there():
    two = build([0, 1], [(0,), (1,)], [(0, 1)])
    s = parse_study({"servers": ["granian"], "load": [{**LOAD, "placement": "shared"}]}, "p")
    placed = place(s.loads[0], s, get("granian"), layout(two), two)
    assert placed.server_cpus == [0] and placed.engine_cpus == [1]
    assert placed.mode_note and "the same 1 CPU(s) as pinned on this machine" in placed.mode_note


def test_cpu_quota_without_the_quota_placement_is_refused():
    import pytest

    from wsgibench.errors import UsageError

    with pytest.raises(UsageError, match="cpu_quota is for placement"):
        parse_study({"servers": ["granian"], "load": [{**LOAD, "cpu_quota": 1.0}]}, "p")
