"""`wsgibench tune`: search a server's settings for the highest capacity within a latency budget,
each trial a stored capacity search, and print the winner as the command line to deploy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from wsgibench.cli.kit import console, friendly
from wsgibench.cli.run import _install_missing, _run
from wsgibench.cli.tuning_table import print_tuning
from wsgibench.errors import UsageError
from wsgibench.machine import topology
from wsgibench.paths import default_results
from wsgibench.results.capacity_read import ServerCapacity, read_capacities
from wsgibench.results.store import Store
from wsgibench.results.tuning import TrialRecord, TuneRecord, save_tuning
from wsgibench.run.engine import engine_version
from wsgibench.run.study import refuse_bad_plans
from wsgibench.run.tune import (
    ROUNDS,
    Tuning,
    settings_for,
    threads_trend,
    tune,
)
from wsgibench.run.tune_command import command_line
from wsgibench.servers import resolve
from wsgibench.study.appspec import AppSpec
from wsgibench.study.model import Study, parse_study
from wsgibench.study.overrides import Overrides


def tune_servers(
    servers: list[str],
    app: str,
    budget: dict[str, Any],
    console: Console,
    *,
    results: Path | None = None,
    max_trials: int = 64,
    time_budget_s: float = 1800.0,
    max_threads: int = 32,
    start_rate: float = 10.0,
    app_env: dict[str, str] | None = None,
    memory_limit_mb: int = 512,
    workers: list[int] | None = None,
    threads: list[int] | None = None,
    base: Path | None = None,
    app_keys: dict[str, Any] | None = None,
) -> Tuning:
    """Tune the servers within the budget (run/tune.py), each round a stored study; print and
    keep the ranking and the winner's command line. `base`: what the app is relative to;
    `app_keys`: one's own app's study keys besides its name (APP_KEYS)."""
    base = base or Path.cwd()
    names = _resolved(servers)
    engine_version()
    cpus = len(topology.layout(topology.read()).server_cpus)
    settings = settings_for(names, cpus, max_threads, workers, threads)
    store = Store(results or default_results())
    common = dict(servers=names, app=app, app_env=app_env or {}, **(app_keys or {}))
    common.update(random_order=False, memory_limit_mb=memory_limit_mb)
    label = names[0] if len(names) == 1 else f"{names[0]} +{len(names) - 1}"
    installed, studies, served = list[bool](), list[int](), list[AppSpec]()

    def run_round(loads: list[dict[str, Any]], round_: int, until: float) -> list[ServerCapacity]:
        raw = {**common, "name": f"tune {label} r{round_ + 1}", "repeats": ROUNDS[round_][1]}
        study = parse_study({**raw, "load": loads}, "tune", base, base)
        refuse_bad_plans(study)
        if not installed:
            _install_missing(study, console)
            installed.append(True)
        served[:] = [study.app_of()]  # the app as the rounds resolved it, for the command line
        studies.append(_run(study, store, console, deadline=until))
        return read_capacities(store, studies[-1])

    tuning = tune(
        settings,
        run_round,
        budget,
        start_rate=start_rate,
        max_trials=max_trials,
        time_budget_s=time_budget_s,
        progress=lambda m: console.print(m, highlight=False),
    )
    record = record_of(tuning, served[0] if served else None, budget, label, studies)
    if studies:
        save_tuning(store, record)
    print_tuning(console, record, store.path)
    return tuning


def _resolved(servers: list[str]) -> list[str]:
    try:
        return resolve(servers)
    except UsageError as exc:
        raise UsageError(f"tune: {exc}") from None


def record_of(
    tuning: Tuning, app: AppSpec | None, budget: dict[str, Any], label: str, studies: list[int]
) -> TuneRecord:
    """What the store keeps of a tuning (results/tuning.py), the winner's command line with it."""
    winner = tuning.winner
    command = command_line(winner.setting, app, Path.cwd()) if winner is not None and app else None
    several = len({t.setting.server for t in tuning.trials}) > 1
    commands = (
        tuple((t.setting.label, command_line(t.setting, app, Path.cwd())) for t in tuning.winners())
        if several and app is not None
        else ()
    )
    return TuneRecord(
        label=label,
        budget=budget_text(budget),
        studies=tuple(studies),
        trials=tuple(
            TrialRecord(
                t.setting.label,
                t.round + 1,
                t.capacity,
                t.interval[1],
                t.cpu_us,
                t.rss_mib,
                t.broke,
                t.limited,
            )
            for t in tuning.trials
        ),
        winner=winner.setting.label if winner else None,
        command=command,
        stopped=tuning.stopped,
        trends=tuple(threads_trend(tuning.trials)),
        tied=tuple(t.setting.label for t in tuning.tied),
        best=tuning.best.setting.label if tuning.best else None,
        commands=commands,
        untried=tuple(s.label for s in tuning.untried),
    )


def budget_text(budget: dict[str, Any]) -> str:
    """The budget as the ranking's title says it, with the pool the trials' load ran on."""
    pool = budget.get("pool")
    on = f" on a pool of {pool} connections" if pool else ""
    return f"p99 ≤ {budget['slo_p99_ms']:g} ms{on}"


def _budget(p99_ms: float, pool: int | None) -> dict[str, Any]:
    """What every trial's capacity load takes besides its setting: the budget and the pool."""
    return {"slo_p99_ms": p99_ms, **({"pool": pool} if pool else {})}


# What a study says of its app besides its name and paths, that every round takes as it is.
APP_KEYS = ("app_asgi", "interface", "probe", "requests")


def _app_keys(study: Study) -> dict[str, Any]:
    """One's own app as the study gives it, for every round: its keys, its paths resolved."""
    keys = {k: study.raw[k] for k in APP_KEYS if k in study.raw}
    app = study.app_of()
    paths = (("requirements", app.requirements), ("app_workdir", app.workdir)) if app.spec else ()
    keys.update({key: str(path) for key, path in paths if path is not None})
    return keys


def tune_study(study: Study, results: Path | None, console: Console) -> Store:
    """A study with `tune = { ... }`: `wsgibench tune` with its settings, app and limits."""
    t = study.tune or {}
    path = results or default_results()
    tune_servers(
        list(t.get("servers") or study.servers),
        study.app_of().spec or study.app,
        _budget(t["slo_p99_ms"], t.get("pool")),
        console,
        results=path,
        max_trials=int(t.get("trials", 64)),
        time_budget_s=float(t.get("time_s", 1800.0)),
        max_threads=int(t.get("max_threads", 32)),
        start_rate=float(t.get("start_rate", 10.0)),
        app_env=dict(study.raw.get("app_env", {})),
        memory_limit_mb=study.memory_limit_mb or 512,
        workers=t.get("workers"),
        threads=t.get("threads"),
        base=study.base,
        app_keys=_app_keys(study),
    )
    return Store(path, create=False, read_only=True)


@click.command("tune")
@click.argument("servers", nargs=-1, required=True)
@click.option("--app", default="pong", show_default=True, help="A built-in app or module:callable.")
@click.option(
    "--p99-ms",
    type=click.FloatRange(min=0, min_open=True),
    default=100.0,
    show_default=True,
    help="The latency budget: corrected p99 at most this.",
)
@click.option(
    "--trials",
    type=click.IntRange(min=1),
    default=64,
    show_default=True,
    help="At most this many trials in all, chosen to cover the space: every worker count at "
    "the lowest and highest thread counts before the counts between.",
)
@click.option(
    "--time",
    "time_s",
    type=click.FloatRange(min=1),
    default=1800.0,
    show_default=True,
    help="The whole tuning's time, the first round's included: no trial starts after it (a "
    "ranking of round 1 alone is said as coarse).",
)
@click.option(
    "--max-threads",
    type=click.IntRange(min=1),
    default=32,
    show_default=True,
    help="The most threads per worker tried.",
)
@click.option(
    "--start-rate",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="The first rate each search tries.",
)
@click.option(
    "--workers",
    "workers_list",
    metavar="N,N",
    help="The worker counts to try (default 1, N, 2N+1).",
)
@click.option(
    "--threads", "threads_list", metavar="N,N", help="The thread counts to try (default 1..32)."
)
@click.option(
    "--app-env", "app_env", multiple=True, metavar="KEY=VALUE", help="An app setting (repeatable)."
)
@click.option(
    "--requirements",
    metavar="FILE",
    help="Your app's dependencies: a requirements.txt or pyproject.toml (relative to the "
    "working directory).",
)
@click.option(
    "--app-asgi",
    metavar="SPEC",
    help="With --app (its WSGI side): the same app's ASGI side, for the ASGI servers.",
)
@click.option("--path", metavar="PATH", help="The one request to send (e.g. /api/items).")
@click.option(
    "--expect-status",
    type=click.IntRange(100, 999),
    help="With --path: the status of a valid reply (default 200).",
)
@click.option(
    "--pool",
    type=click.IntRange(min=1),
    metavar="N",
    help="Each trial's arrivals on N keep-alive connections, a request each "
    "(default: a connection per arrival).",
)
@click.option(
    "--results",
    type=click.Path(path_type=Path),
    help="The results store (default: results/wsgibench.sqlite).",
)
@friendly
def tune_command(
    servers: tuple[str, ...],
    app: str,
    p99_ms: float,
    trials: int,
    time_s: float,
    max_threads: int,
    start_rate: float,
    app_env: tuple[str, ...],
    results: Path | None,
    workers_list: str | None,
    threads_list: str | None,
    pool: int | None,
    requirements: str | None,
    app_asgi: str | None,
    path: str | None,
    expect_status: int | None,
) -> None:
    """Find the settings (workers, threads, Granian's runtime mode; worker class across
    gunicorn-*) with the highest capacity within a p99 budget, and print the winner's command
    line (one per server tuned): the server's own (waitress-serve, gunicorn ...), or, for a
    server with none (bjoern), wsgibench's launcher, said so."""
    env = dict(pair.partition("=")[::2] for pair in app_env)
    given = Overrides(
        app=app,
        requirements=requirements,
        app_asgi=app_asgi,
        path=path,
        expect_status=expect_status,
    )
    keys = given.app_table({}, [])[0]
    keys.pop("app")
    tune_servers(
        list(servers),
        app,
        _budget(p99_ms, pool),
        console,
        results=results,
        max_trials=trials,
        time_budget_s=time_s,
        max_threads=max_threads,
        start_rate=start_rate,
        app_env=env,
        workers=_counts(workers_list, "--workers"),
        threads=_counts(threads_list, "--threads"),
        app_keys=keys,
    )


def _counts(value: str | None, option: str) -> list[int] | None:
    if value is None:
        return None
    try:
        counts = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"{option} takes counts such as 1,8, not {value!r}") from None
    if not counts or min(counts) < 1:
        raise UsageError(f"{option} takes counts of at least 1, not {value!r}")
    return counts
