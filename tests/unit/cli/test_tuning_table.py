"""A tuning kept in the store and printed: the ranking, a trial whose search the engine cut short
shown as a lower bound ("≥", "at least") and not as broken, and a winner that is one."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from wsgibench.cli.tuning_table import print_tuning
from wsgibench.results.store import Store
from wsgibench.results.tuning import TrialRecord, TuneRecord, save_tuning, tuning_of

LAG = "load generator was the bottleneck: schedule lag p99 13335 us > 10000 us"


def _record() -> TuneRecord:
    return TuneRecord(
        label="gunicorn-gthread",
        budget="p99 ≤ 200 ms",
        studies=(1, 2),
        trials=(
            TrialRecord("gunicorn-gthread w1 t1", 1, 20.0, 22.0, 2087.0, 49.0),
            TrialRecord("gunicorn-gthread w1 t8", 1, 140.0, 160.0, 1416.0, 49.0),
            TrialRecord("gunicorn-gthread w1 t8", 2, 160.0, None, 1128.0, 49.0, limited=LAG),
            TrialRecord("gunicorn-gthread w1 t4", 1, None, None, None, None, broke="OOM"),
        ),
        winner="gunicorn-gthread w1 t8",
        command="venv/bin/python -m gunicorn --threads 8 sleep:app",
        stopped="one setting left",
    )


def _printed(record: TuneRecord) -> str:
    out = io.StringIO()
    print_tuning(Console(file=out, width=200), record)
    return out.getvalue()


def test_a_lower_bound_is_said_as_one_and_kept_through_the_store(tmp_path: Path):
    store = Store(tmp_path / "t.sqlite")
    save_tuning(store, _record())
    back = tuning_of(store, 2)
    assert back == _record()
    said = _printed(back)
    assert "best: gunicorn-gthread w1 t8, at least 160 req/s within the budget" in said
    assert "≥ 160" in said and f"a lower bound: {LAG}" in said
    assert "gunicorn-gthread w1 t4 (round 1): OOM" in said
    assert "no setting met" not in said


def test_no_winner_says_why():
    every_broke = TuneRecord(
        "x", "p99 ≤ 1 ms", (1,), (TrialRecord("x w1 t1", 1, None, None, None, None, "OOM"),),
        None, None, "one setting left",
    )  # fmt: skip
    assert "every setting broke or could not run" in _printed(every_broke)
    missed = TuneRecord(
        "x", "p99 ≤ 1 ms", (1,), (TrialRecord("x w1 t1", 1, None, 10.0, None, None),),
        None, None, "one setting left",
    )  # fmt: skip
    assert "no setting met the budget at the lowest rate tried" in _printed(missed)


def test_settings_tied_with_the_best_are_said_and_the_cheapest_recommended(tmp_path: Path):
    from dataclasses import replace

    record = replace(
        _record(),
        tied=("gunicorn-gthread w3 t8", "gunicorn-gthread w1 t8"),
        best="gunicorn-gthread w3 t8",
    )
    text = _printed(record)
    assert "tied within noise with the highest capacity (gunicorn-gthread w3 t8)" in text
    assert "recommended: the cheapest of them, by CPU per request at capacity" in text
    store = Store(tmp_path / "s.sqlite")
    save_tuning(store, record)
    back = tuning_of(store, 2)
    assert back is not None and back.tied == record.tied and back.best == record.best


def test_each_server_tuned_prints_its_own_command_and_the_untried_are_said(tmp_path: Path):
    from dataclasses import replace

    record = replace(
        _record(),
        commands=(("waitress w1 t8", "venv/bin/waitress-serve --threads=8 pong:app"),
                  ("bjoern w1 t1", "# bjoern has no command line of its own: …")),
        untried=("gunicorn-gthread w3 t2",),
    )  # fmt: skip
    store = Store(tmp_path / "t.sqlite")
    save_tuning(store, record)
    back = tuning_of(store, 2)
    assert back == record
    said = _printed(back)
    assert "each server's own best, by the same rule among its settings:" in said
    assert "waitress w1 t8:\n  venv/bin/waitress-serve --threads=8 pong:app" in said
    assert "not tried (1, the trial or time budget): gunicorn-gthread w3 t2" in said
