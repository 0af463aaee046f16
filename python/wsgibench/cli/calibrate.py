"""`wsgibench calibrate`: A/A calibration on this machine. Each server runs as two entries of the
built-in `calibrate` study (`server` and `server#b`, their order alternating pair by pair), N
pairs, and each pair is judged by the rules every claim uses; how often identical servers were
called apart (ahead, changed, capacity above) is printed and kept in the store
(results/calibration.py), where reports of this machine's runs cite it beside their claims."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from wsgibench.cli.kit import console, friendly
from wsgibench.errors import UsageError

# The capacity load `--capacity` adds: bench/capacity_repeat's search, without its cost cells.
CAPACITY_LOAD = {
    "name": "capacity",
    "model": "capacity",
    "slo_p99_ms": 10.0,
    "duration_s": 2.0,
    "warmup_s": 0.5,
    "calls": 100,
    "start_rate": 20.0,
    "step_repeats": 3,
    "cost_cells": False,
}


def pair_table(base: dict[str, Any], server: str, twin: str, index: int) -> dict[str, Any]:
    """The calibrate study of pair `index`: the two entries, in turn first."""
    servers = [server, twin] if index % 2 == 0 else [twin, server]
    return {**base, "servers": servers, "random_order": False, "seed": index + 1}


def calibrate(
    names: list[str],
    pairs: int,
    base: dict[str, Any],
    results: Path | None,
    install: bool,
) -> list[Any]:
    """Run the pairs of every server; each server's calibration saved and summarised."""
    from wsgibench.cli.run import _install_missing
    from wsgibench.paths import default_results
    from wsgibench.results.calibration import (
        TWIN,
        Calibration,
        judge_pair,
        save_calibration,
    )
    from wsgibench.results.compare import comparable_metadata
    from wsgibench.results.store import Store
    from wsgibench.run.engine import engine_version
    from wsgibench.run.study import StudyRunner, refuse_bad_plans
    from wsgibench.study.model import parse_study

    engine_version()
    store, found = Store(results or default_results()), []
    for name in names:
        twin, judged, studies, started = f"{name}{TWIN}", [], [], time.time()
        for i in range(pairs):
            study = parse_study(pair_table(base, name, twin, i), "calibrate")
            refuse_bad_plans(study)
            if install and i == 0:
                _install_missing(study, console)
            # the first pair checks the replies before its cells; the later pairs' are the same
            study_id = StudyRunner(study, store, check_replies=i == 0).run()
            studies.append(study_id)
            judged.append(judge_pair(store, study_id, name, twin))
            console.print(f"{name} pair {i + 1}/{pairs}: {_said(judged[-1])}", highlight=False)
        env = json_env(store, studies[0])
        calibration = Calibration(
            name,
            sizes(base),
            comparable_metadata(env),
            tuple(judged),
            started,
            time.time() - started,
            studies=tuple(studies),
        )
        save_calibration(store, calibration)
        console.print(calibration.summary(), highlight=False)
        found.append(calibration)
    console.print(f"calibration stored in {store.path}", highlight=False)
    return found


def json_env(store: Any, study_id: int) -> dict[str, Any]:
    import json

    env: dict[str, Any] = json.loads(store.study(study_id)["environment_json"])
    return env


def sizes(table: dict[str, Any]) -> str:
    """The pairs' study in a few words: its loads, repeats and starts."""
    loads = [
        f"{load['name']} {load.get('model')}"
        + (f" at {', '.join(f'{v:g}' for v in load['levels'])}" if load.get("levels") else "")
        for load in table.get("load", [])
    ]
    return (
        f"{'; '.join(loads)}, {table.get('repeats', 3)} repeats over "
        f"{min(table.get('starts', 3), table.get('repeats', 3))} starts"
    )


def _said(pair: Any) -> str:
    words = [
        "ahead" if pair.ahead else ("not ahead" if pair.tested else "untested"),
        "changed" if pair.changed else "no change",
    ]
    if pair.above is not None:
        words.append("capacity above" if pair.above else "capacities together")
    return ", ".join(words)


@click.command("calibrate")
@click.argument("servers", nargs=-1)
@click.option("--pairs", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--repeats", type=click.IntRange(min=1), help="Repeats per cell (default 3).")
@click.option("--starts", type=click.IntRange(min=1), help="Server starts per cell (default 3).")
@click.option("--duration", type=click.FloatRange(min=0, min_open=True), help="Seconds a repeat.")
@click.option("--capacity", is_flag=True, help="Also search each entry's capacity (p99 ≤ 10 ms).")
@click.option("--results", type=click.Path(path_type=Path), help="The store (default: ./results).")
@click.option("--install/--no-install", default=True, show_default=True)
@friendly
def calibrate_command(
    servers: tuple[str, ...],
    pairs: int,
    repeats: int | None,
    starts: int | None,
    duration: float | None,
    capacity: bool,
    results: Path | None,
    install: bool,
) -> None:
    """A/A calibration: each SERVER (default bjoern) run as two identical entries, PAIRS times
    interleaved, and how often the rules called them apart (ahead, changed, capacity above)
    against the rules' nominal 5 %, stored for reports of this machine to cite."""
    from wsgibench.servers import resolve
    from wsgibench.study.model import read_raw, study_path

    names = resolve(list(servers) or ["bjoern"])
    if any("#" in n for n in names):
        raise UsageError("calibrate: name each server once; its second entry is made for it")
    base = read_raw(study_path("calibrate"))
    base |= {k: v for k, v in (("repeats", repeats), ("starts", starts)) if v is not None}
    if duration is not None:
        base["load"] = [{**load, "duration_s": duration} for load in base["load"]]
    if capacity:
        load = CAPACITY_LOAD | ({"duration_s": duration} if duration is not None else {})
        base["load"] = [*base["load"], load]
    calibrate(names, pairs, base, results, install)
