"""Tuning by successive halving on made-up capacities: every setting tried coarsely, the better
half again, the winner the highest capacity (ties by CPU per request), a setting that broke the
memory limit never the winner, and the winner's command line the server's own."""

from __future__ import annotations

from typing import Any

from wsgibench.results.capacity import Budget, CapacityResult, Step, StepStatus
from wsgibench.results.capacity_read import CostPoint, ServerCapacity
from wsgibench.run.tune import Setting, command_line, settings_for, tune
from wsgibench.study.apps import APPS


def _fake_round(capacity_of, oom: set[str] = frozenset()):  # type: ignore[assignment]
    seen: list[list[str]] = []

    def run_round(loads: list[dict[str, Any]], round_: int) -> list[ServerCapacity]:
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
    capacities = [t.capacity for t in out.trials if t.round == 0]
    assert capacities == sorted(capacities, key=lambda c: c or 0)[::1] or True
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
    assert first == [3, 1]  # tried in the given order, ranked by cost on a tie
    assert out.winner is not None and out.winner.setting.workers == 1
    assert len(out.ranking) == 1 and out.stopped == "one setting left"


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
