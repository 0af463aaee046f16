"""Tuning by successive halving on made-up capacities: every setting tried coarsely, the better
half again, the winner the highest capacity (ties by CPU per request), a setting that broke the
memory limit never the winner, and the winner's command line the server's own."""

from __future__ import annotations

import time
from typing import Any

import pytest

from wsgibench.errors import UsageError
from wsgibench.results.capacity import Budget, CapacityResult, Step, StepStatus
from wsgibench.results.capacity_read import CostPoint, ServerCapacity
from wsgibench.run.tune import Setting, settings_for, spread, trial_loads, tune
from wsgibench.run.tune_command import command_line
from wsgibench.study.apps import APPS
from wsgibench.study.model import Study, parse_study


def _fake_round(capacity_of, oom: set[str] = frozenset(), limited=frozenset()):  # type: ignore[assignment]
    """Each setting's search as capacity_of says; `oom`: settings that broke the memory limit;
    `limited`: (round from 0, setting) whose search the engine cut short at twice its capacity
    (the capacity then a lower bound)."""
    seen: list[list[str]] = []

    def run_round(
        loads: list[dict[str, Any]], round_: int, deadline: float = 0.0
    ) -> list[ServerCapacity]:
        seen.append([load["name"] for load in loads])
        out = []
        for load in loads:
            setting = Setting(load["servers"][0], load["workers"], load["threads"])
            cap = capacity_of(setting)
            reason = (
                "disqualified: memory limit hit: 1 OOM kill(s)" if setting.label in oom else "ok"
            )
            steps = (Step(cap * 2, StepStatus.MISSED, reason),)
            result = CapacityResult(cap, cap * 1.05, None, "within 5%", steps=steps)
            if (round_, setting.label) in limited:
                lag = "load generator was the bottleneck: schedule lag p99 13335 us > 10000 us"
                steps = (Step(cap * 2, StepStatus.INVALID, lag, harness=True),)
                result = CapacityResult(cap, None, None, f"invalid: {lag}", lag, steps)
            costs = (CostPoint(1.0, 1e6 / cap * setting.workers, 40.0),)
            out.append(
                ServerCapacity(
                    load["name"], setting.server, Budget(200), 1, result, costs, setting.workers
                )
            )
        return out

    return run_round, seen


def threads_help(setting: Setting) -> float:
    """The sleep app's shape: capacity grows with threads × workers."""
    return 18.0 * setting.threads * setting.workers


def test_every_setting_is_tried_then_the_better_half():
    settings = settings_for(["gunicorn-gthread"], cpus=1, max_threads=8)
    assert [(s.workers, s.threads) for s in settings] == [
        (w, t) for w in (1, 3) for t in (1, 2, 4, 8)
    ]
    run_round, seen = _fake_round(threads_help)
    out = tune(settings, run_round, {"slo_p99_ms": 200})
    assert [len(names) for names in seen] == [8, 4, 2]
    assert out.winner is not None and out.winner.setting == Setting("gunicorn-gthread", 3, 8)
    first = {
        t.setting.threads: t.capacity for t in out.trials if t.round == 0 and t.setting.workers == 1
    }
    assert first[8] > first[4] > first[2] > first[1]  # more threads better, and said so in order


def test_a_setting_that_broke_the_memory_limit_is_never_the_winner():
    settings = [Setting("gunicorn-gthread", 1, t) for t in (4, 8)]
    run_round, _ = _fake_round(threads_help, oom={"gunicorn-gthread w1 t8"})
    out = tune(settings, run_round, {"slo_p99_ms": 200})
    broke = [t for t in out.trials if t.broke]
    assert broke and all("memory limit" in (t.broke or "") for t in broke)
    assert out.winner is not None and out.winner.setting.threads == 4


def test_ties_go_to_the_lower_cpu_per_request():
    settings = [Setting("gunicorn-gthread", 3, 4), Setting("gunicorn-gthread", 1, 4)]
    run_round, _ = _fake_round(lambda s: 100.0)
    out = tune(settings, run_round, {"slo_p99_ms": 200})
    first = [t.setting.workers for t in out.trials if t.round == 0]
    assert first == [1, 3]  # tried in coverage order, ranked by cost on a tie
    assert out.winner is not None and out.winner.setting.workers == 1
    # tied within noise, neither is cut: both run every round
    assert len(out.ranking) == 2 and out.stopped == "every round run"


def test_the_trial_budget_bounds_the_search():
    settings = settings_for(["gunicorn-gthread"], cpus=1, max_threads=8)
    run_round, seen = _fake_round(threads_help)
    out = tune(settings, run_round, {"slo_p99_ms": 200}, max_trials=9)
    assert [len(names) for names in seen] == [8, 1] and out.stopped
    assert len(out.trials) == 9


def test_the_winners_command_line_is_the_servers_own():
    line = command_line(Setting("gunicorn-gthread", 3, 8), APPS["sleep"])
    assert "-m gunicorn" in line and "--workers 3" in line and "--threads 8" in line
    assert "--worker-class gthread" in line and line.endswith("sleep:app")
    uwsgi = command_line(Setting("uwsgi-http11", 2, 4), APPS["pong"])
    assert "--processes 2" in uwsgi and "--threads 4" in uwsgi and "--module pong:app" in uwsgi


def test_a_launchers_command_line_runs_as_printed():
    # bjoern has no command line of its own: it ran from wsgibench's launcher, which imports its
    # kit (the line printed without it ended in ModuleNotFoundError: No module named
    # 'launchkit'), and the line says so.
    from wsgibench.servers.recipe import LAUNCHKIT_DIR

    said, line = command_line(Setting("bjoern", 1, 1), APPS["pong"]).splitlines()
    assert line.startswith(f"PYTHONPATH={LAUNCHKIT_DIR} venv/bin/python ")
    assert line.split()[2].endswith("servers/bjoern/launch.py")
    assert said.startswith("# bjoern has no command line of its own: this runs wsgibench's")
    daphne = command_line(Setting("daphne", 1, 1), APPS["pong"])  # the app's folder on its path
    assert daphne.startswith("PYTHONPATH=. venv/bin/daphne ") and "\n" not in daphne


def test_a_server_with_a_command_line_of_its_own_gets_it_not_the_launchers():
    said, line = command_line(Setting("waitress", 1, 2), APPS["pong"]).splitlines()
    assert said.startswith("# waitress's own command line with the trial's settings")
    assert line == (
        "PYTHONPATH=. venv/bin/waitress-serve --host=0.0.0.0 --port=8000 --threads=2 --backlog=2048 "
        "--connection-limit=100000 pong:app"
    )
    _, cheroot = command_line(Setting("cheroot", 1, 16), APPS["pong"]).splitlines()
    assert cheroot.startswith("PYTHONPATH=. venv/bin/cheroot --bind=0.0.0.0:8000 --threads=16 ")


def test_a_trial_budget_covers_every_worker_count_before_more_threads():
    settings = settings_for(["gunicorn-gthread"], cpus=2, max_threads=32)  # w 1, 2, 5; t 1..32
    run_round, seen = _fake_round(threads_help)
    said: list[str] = []
    out = tune(settings, run_round, {"slo_p99_ms": 200}, max_trials=6, progress=said.append)
    tried = [(t.setting.workers, t.setting.threads) for t in out.trials if t.round == 0]
    assert tried == [(1, 1), (2, 1), (5, 1), (1, 32), (2, 32), (5, 32)]
    assert len(out.untried) == len(settings) - 6
    assert said[0].startswith("trials: 6 of 18 settings, chosen to cover the space")
    assert spread([1, 2, 4, 8, 16, 32]) == [1, 32, 4, 2, 8, 16]


def test_the_time_budget_bounds_the_first_round_and_says_it_is_coarse():
    settings = settings_for(["gunicorn-gthread"], cpus=1, max_threads=8)
    run_round, _ = _fake_round(threads_help)

    def out_of_time(loads, round_, deadline):
        time.sleep(0.01)  # the budget is spent during the first round
        assert time.monotonic() >= deadline
        return run_round(loads[:3], round_)  # the trials that started before the deadline

    out = tune(settings, out_of_time, {"slo_p99_ms": 200}, time_budget_s=0.001)
    assert len(out.trials) == 3 and len(out.untried) == 5
    assert out.stopped.startswith("the time budget (0.001 s); the ranking is round 1's, coarse")
    assert out.winner is not None


def test_each_server_tuned_gets_its_own_winner():
    settings = [Setting("waitress", 1, t) for t in (1, 8)] + [Setting("bjoern", 1, 1)]
    run_round, _ = _fake_round(threads_help)
    out = tune(settings, run_round, {"slo_p99_ms": 200})
    assert [t.setting.label for t in out.winners()] == ["waitress w1 t8", "bjoern w1 t1"]


def test_ones_own_apps_command_line_names_it_once_whatever_its_interface(tmp_path):
    # The interface of one's own app is read when the trials start; the study's spec has none.
    (tmp_path / "myapi.py").write_text("app = None\n")
    load = {"name": "c", "model": "closed", "levels": [1], "duration_s": 1}
    study = parse_study({"servers": ["uvicorn"], "app": "myapi:app", "load": [load]}, "t", tmp_path)
    app = study.app_of()
    assert app.interface == ""
    for server in ("granian-asgi", "uvicorn", "gunicorn-gthread", "granian", "uwsgi-http11"):
        line = command_line(Setting(server, 1, 1), app)
        assert "myapi:app" in line.split() and "myapi:app:app" not in line, line


def test_the_command_line_says_which_folder_it_runs_from_when_not_here(tmp_path):
    # A file inside a package is imported from above the package: `src/`, not where one stands.
    web = tmp_path / "src" / "shop"
    web.mkdir(parents=True)
    (web / "__init__.py").write_text("")
    (web / "app.py").write_text("app = None\n")
    load = {"name": "c", "model": "closed", "levels": [1], "duration_s": 1}
    raw = {"servers": ["waitress"], "app": "src/shop/app.py:app", "load": [load]}
    app = parse_study(raw, "t", tmp_path).app_of()
    where, line = command_line(Setting("gunicorn-gthread", 2, 4), app, tmp_path).splitlines()
    assert where == "# from src/ (the app's folder, first on the path as the trials ran it)"
    assert line.endswith(" shop.app:app")
    assert "\n" not in command_line(Setting("gunicorn-gthread", 2, 4), app, tmp_path / "src")
    assert "\n" not in command_line(Setting("gunicorn-gthread", 2, 4), APPS["pong"], tmp_path)


def test_a_factorys_command_line_says_the_module_the_trials_imported(tmp_path):
    (tmp_path / "fac.py").write_text("def create_app(word): ...\n")
    load = {"name": "c", "model": "closed", "levels": [1], "duration_s": 1}
    raw = {"servers": ["waitress"], "app": "fac:create_app('hi')", "load": [load]}
    app = parse_study(raw, "t", tmp_path).app_of()
    shim, line = command_line(Setting("gunicorn-gthread", 2, 4), app).splitlines()
    assert shim == (
        "# wsgibench_factory.py beside the app: from fac import create_app as _factory;"
        " app = _factory('hi')"
    )
    assert line.endswith(" wsgibench_factory:app") and "--workers 2" in line


def test_a_search_the_engine_cut_short_keeps_its_lower_bound_and_can_win():
    # Round 2: the 8-thread search stops where the engine lagged (a starved VM), above 160 req/s
    # that met the budget; 1 thread stays at 20. The lower bound still beats it: 8 threads win,
    # said as "at least", and the setting was not thrown out as broken in round 1 either.
    settings = [Setting("gunicorn-gthread", 1, t) for t in (1, 8)]
    eight = "gunicorn-gthread w1 t8"
    run_round, seen = _fake_round(lambda s: 20.0 * s.threads, limited={(0, eight), (1, eight)})
    out = tune(settings, run_round, {"slo_p99_ms": 200})
    assert len(seen) == 2 and seen[1] == ["r2 gunicorn-gthread w1 t8"]
    first = {t.setting.threads: t for t in out.trials if t.round == 0}
    assert first[8].broke is None and first[8].limited and "schedule lag" in first[8].limited
    assert out.winner is not None and out.winner.setting.threads == 8
    assert out.winner.capacity == 160.0 and out.winner.limited == first[8].limited


def test_a_setting_that_could_not_start_is_broken_not_a_lower_bound():
    settings = [Setting("gunicorn-gthread", 1, t) for t in (1, 8)]

    def run_round(
        loads: list[dict[str, Any]], round_: int, deadline: float = 0.0
    ) -> list[ServerCapacity]:
        out = []
        for load in loads:
            setting = Setting(load["servers"][0], load["workers"], load["threads"])
            if setting.threads == 8:
                why = "did not start or serve: no reply on the port in 10 s"
                steps = (Step(10.0, StepStatus.INVALID, why),)
                result = CapacityResult(None, None, None, f"invalid at 10/s: {why}", why, steps)
            else:
                steps = (Step(40.0, StepStatus.MISSED, "p99 900 ms > 200 ms"),)
                result = CapacityResult(20.0, 40.0, None, "within 5%", steps=steps)
            out.append(ServerCapacity(load["name"], setting.server, Budget(200), 1, result, (), 1))
        return out

    out = tune(settings, run_round, {"slo_p99_ms": 200})
    eight = next(t for t in out.trials if t.setting.threads == 8)
    assert eight.limited is None and (eight.broke or "").startswith("could not run: did not start")
    assert out.winner is not None and out.winner.setting.threads == 1


def test_granians_runtime_modes_are_an_axis_and_in_its_command_line():
    settings = settings_for(["granian"], cpus=1, max_threads=2)
    assert {s.label for s in settings} == {
        f"granian w{w} t{t} {m}" for w in (1, 3) for t in (1, 2) for m in ("st", "mt")
    }
    (load,) = trial_loads([Setting("granian", 1, 2, "st")], 0, {"slo_p99_ms": 10}, 100.0)
    assert load["runtime_mode"] == "st" and load["name"] == "r1 granian w1 t2 st"
    line = command_line(Setting("granian", 2, 4, "mt"), APPS["pong"])
    assert "--runtime-mode mt" in line and "--blocking-threads 4" in line and "--workers 2" in line
    # a server without modes gets none, and no flag
    assert {s.mode for s in settings_for(["gunicorn-gthread"], cpus=1, max_threads=1)} == {None}
    assert "--runtime-mode" not in command_line(Setting("gunicorn-gthread", 1, 1), APPS["pong"])


def test_a_runtime_mode_a_server_lacks_is_refused_in_one_line():
    def study(mode: str, servers: list[str]) -> Study:
        load = {
            "name": "c",
            "model": "closed",
            "levels": [1],
            "duration_s": 1,
            "runtime_mode": mode,
        }
        return parse_study({"servers": servers, "load": [load]}, "modes")

    assert study("st", ["granian"]).loads[0].runtime_mode == "st"
    with pytest.raises(UsageError, match="runtime_mode 'st': server gunicorn-gthread has no "):
        study("st", ["granian", "gunicorn-gthread"])
    with pytest.raises(UsageError, match="runtime_mode 'fast': server granian has 'st', 'mt'"):
        study("fast", ["granian"])


def test_a_pool_goes_into_every_trials_load_and_the_budgets_title():
    from wsgibench.cli.tune import _budget, budget_text
    from wsgibench.run.tune import pool_note

    budget = _budget(10.0, 16)
    settings = [Setting("gunicorn-gthread", 1, 8), Setting("gunicorn-gthread", 3, 8)]
    loads = trial_loads(settings, 0, budget, 100.0)
    assert {load["pool"] for load in loads} == {16}
    # the loads are what a study file may hold: a capacity search on the pool
    study = parse_study({"servers": ["gunicorn-gthread"], "load": loads}, "tune")
    assert [load.params["pool"] for load in study.loads] == [16, 16]
    assert budget_text(budget) == "p99 ≤ 10 ms on a pool of 16 connections"
    assert budget_text(_budget(10.0, None)) == "p99 ≤ 10 ms"
    assert "pool" not in trial_loads(settings, 0, _budget(10.0, None), 100.0)[0]
    # 3 × 8 requests at once cannot show on 16 connections, and the tuning says so
    assert "up to 24 here" in (pool_note(16, settings) or "")
    assert pool_note(24, settings) is None and pool_note(None, settings) is None
    said: list[str] = []
    run_round, _ = _fake_round(threads_help)
    tune(settings, run_round, budget, progress=said.append)
    assert said[0].startswith("note: a pool of 16 connections"), said


def test_a_study_tunes_on_a_pool_and_refuses_a_pool_of_none():
    tuned = parse_study({"servers": ["bjoern"], "tune": {"slo_p99_ms": 10, "pool": 32}}, "t")
    assert tuned.tune == {"slo_p99_ms": 10, "pool": 32}
    with pytest.raises(UsageError, match="pool"):
        parse_study({"servers": ["bjoern"], "tune": {"slo_p99_ms": 10, "pool": 0}}, "t")


def test_each_round_starts_where_the_last_one_bracketed_the_setting():
    settings = [Setting("gunicorn-gthread", 1, t) for t in (1, 4, 8)]
    run_round, _ = _fake_round(threads_help)
    loads: list[list[dict[str, Any]]] = []

    def recording(
        batch: list[dict[str, Any]], round_: int, deadline: float
    ) -> list[ServerCapacity]:
        loads.append(batch)
        return run_round(batch, round_)

    out = tune(settings, recording, {"slo_p99_ms": 200}, start_rate=10.0)
    # round 1 searches from the start rate, without cost cells; later rounds from each setting's
    # capacity in the round before, its top next; only the last round runs the cost cells
    assert {load["start_rate"] for load in loads[0]} == {10.0}
    assert not any("second_rate" in load for load in loads[0])
    assert [load["cost_cells"] for batch in loads for load in batch] == [False] * 5 + [True]
    eight = next(t for t in out.trials if t.round == 0 and t.setting.threads == 8)
    (r2,) = [load for load in loads[1] if load["threads"] == 8]
    assert (r2["start_rate"], r2["second_rate"]) == eight.rates == (144.0, 144.0 * 1.05)
    # the loads are what a study file may hold
    study = parse_study({"servers": ["gunicorn-gthread"], "load": loads[1]}, "tune")
    assert {load.capacity.second_rate for load in study.loads if load.capacity} == {
        r["second_rate"] for r in loads[1]
    }


def test_settings_within_noise_of_the_best_tie_and_the_cheapest_is_recommended():
    """Round 3's two settings 4 % apart in capacity (within a search's ±10 %): tied; the one
    that costs less CPU per request is recommended, not the higher point estimate."""
    settings = [Setting("gunicorn-gthread", w, 4) for w in (1, 3)]
    caps = {1: 100.0, 3: 104.0}  # w3 higher by value, but w3 costs 3x the CPU per request
    run_round, _ = _fake_round(lambda s: caps[s.workers])
    out = tune(settings, run_round, {"slo_p99_ms": 200})
    assert out.best is not None and out.best.setting.workers == 3
    assert {t.setting.workers for t in out.tied} == {1, 3}
    assert out.winner is not None and out.winner.setting.workers == 1
    far = {1: 100.0, 3: 150.0}  # 50 % apart: no tie, the best wins whatever it costs
    run_round, _ = _fake_round(lambda s: far[s.workers])
    out = tune(settings, run_round, {"slo_p99_ms": 200})
    assert [t.setting.workers for t in out.tied] == [3] and out.winner is out.best
