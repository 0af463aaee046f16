"""Studies: TOML files naming servers, app, loads, repeats and isolation, checked key by key against
study/keys.py; built-ins ship in study/builtin/."""

from __future__ import annotations

import difflib
import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from wsgibench.errors import UsageError
from wsgibench.machine import topology
from wsgibench.machine.topology import scaling_steps
from wsgibench.paths import STUDIES_DIR
from wsgibench.servers import resolve
from wsgibench.study.apps import APPS, AppSpec, get_app
from wsgibench.study.full import check_full
from wsgibench.study.keys import STUDY_KEYS, TUNE_KEYS
from wsgibench.study.kinds import nearest, read_table
from wsgibench.study.load_keys import SERVER_SETTING_KEYS
from wsgibench.study.loads import Load, RequestKind, check_runtime_mode, parse_load, parse_request
from wsgibench.study.split import LoadHostsSpec, parse_hosts
from wsgibench.study.userapps import is_user_spec, probe_of, user_app


@dataclass(frozen=True)
class Study:
    name: str
    description: str
    servers: tuple[str, ...]
    loads: tuple[Load, ...]
    app: str = "pong"
    requests: tuple[RequestKind, ...] = (RequestKind(),)
    # The app itself: a built-in's spec, or one's own (study/userapps.py); None: APPS[app].
    app_spec: AppSpec | None = None
    app_env: dict[str, str] = field(default_factory=dict)
    # Pitfall switches, right by default; studies (and tests) that show a pitfall turn them wrong.
    backlog: int = 2048
    tcp_nodelay: bool = True
    access_log: bool = False  # honoured by gunicorn recipes
    repeats: int = 3
    starts: int = 3  # independent server starts a cell's repeats are spread over (at most repeats)
    trim: int = 0  # repeats dropped at each end before the trimmed mean (seed 004: 1)
    random_order: bool = True
    seed: int = 1
    # A count, or "auto": each server's convention (ServerRecipe.auto_workers); nginx: 1 per CPU.
    workers: int | Literal["auto"] = 1
    threads: int = 1
    engine_threads: int | None = None  # default: one engine thread per engine CPU
    oversubscribe_engine: bool = False  # more engine threads than engine CPUs allowed
    # Per server: workers and threads the seed gave it ({"uwsgi-http11": {"workers": 5}}).
    server_settings: dict[str, dict[str, int]] = field(default_factory=dict)
    # The server gets this many CPUs (whole cores first) and the engine the rest.
    server_cpu_count: int | None = None
    memory_limit_mb: int | None = 512
    error_threshold: float = 0.05  # error fraction beyond which a server is disqualified
    server_cpus: list[int] | None = None
    engine_cpus: list[int] | None = None
    source: str = ""
    # What this machine could not do of the study as written (e.g. scaling steps it skipped).
    skipped: tuple[str, ...] = ()
    # The address the server listens on (and the engine targets), and the load hosts, if any.
    server_host: str = "127.0.0.1"
    load_hosts: LoadHostsSpec | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    # The command line's changes to the study as written ("--levels 64"), stored with the run.
    changes: tuple[str, ...] = ()
    # `tune = { ... }`: run `wsgibench tune` with these settings instead of the loads.
    tune: dict[str, Any] | None = None
    base: Path | None = None  # what the study's paths are relative to

    def server_names(self) -> list[str]:
        return list(self.servers)

    def cell_count(self) -> int:
        return sum(len(self.servers_of(load)) * len(load.levels) for load in self.loads)

    def servers_of(self, load: Load) -> tuple[str, ...]:
        """The servers a load runs on: the study's, or those of them the load names."""
        return tuple(s for s in self.servers if not load.servers or s in load.servers)

    def app_of(self, load: Load | None = None) -> AppSpec:
        """The app a load serves: its own built-in app when it names one, else the study's."""
        if load is not None and load.app:
            return APPS[load.app]
        return self.app_spec or get_app(self.app)

    def requests_of(self, load: Load | None = None) -> tuple[RequestKind, ...]:
        """The request mix of a load: a replay's log's, its own app's, else the study's."""
        if load is not None and load.replay is not None:
            return tuple(RequestKind(**t) for t in load.replay.request_tables())
        if load is not None and load.app and load.app != self.app:
            return APPS[load.app].requests
        return self.requests


def builtin_names() -> list[str]:
    return sorted(p.stem for p in STUDIES_DIR.glob("*.toml"))


def study_path(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".toml" or os.sep in name_or_path:
        if not path.exists():
            raise UsageError(f"study file {path} does not exist")
        return path
    builtin = STUDIES_DIR / f"{name_or_path}.toml"
    if builtin.exists():
        return builtin
    near = difflib.get_close_matches(name_or_path, builtin_names(), n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise UsageError(
        f"unknown study {name_or_path!r}{hint}; built-ins: {', '.join(builtin_names())}"
    )


def load_study(name_or_path: str) -> Study:
    """A built-in's or TOML file's study as written (with changes: `overrides.load_with`)."""
    path = study_path(name_or_path)
    return parse_study(read_raw(path), shown_path(path), study_base(path))


def study_base(path: Path) -> Path:
    """What a study file's paths are relative to: its folder; a built-in's, the working one."""
    return Path.cwd() if path.parent == STUDIES_DIR else path.resolve().parent


def read_raw(path: Path) -> dict[str, Any]:
    """A study file's TOML table; malformed TOML is one line naming the file and the place."""
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{shown_path(path)}: malformed TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{shown_path(path)}: cannot read: {exc}") from None


def shown_path(path: Path) -> str:
    """How errors name a study file: a built-in by its name, another by the path given."""
    return f"built-in study {path.stem}" if path.parent == STUDIES_DIR else str(path)


def _cpu_list(value: list[int] | None, key: str, where: str) -> list[int] | None:
    if value is None:
        return None
    usable = sorted(os.sched_getaffinity(0))
    bad = [c for c in value if c not in usable]
    if bad:
        raise UsageError(f"{where}: {key} names CPU {bad[0]}, but this machine has CPUs {usable}")
    return value


def parse_study(
    raw: dict[str, Any], where: str, base: Path | None = None, app_base: Path | None = None
) -> Study:
    """The study a TOML table describes, every key checked against `study.keys` first (a wrong
    one is a one-line UsageError naming the file and the key). Paths are relative to `base` (the
    study's folder; a built-in's, the working directory), one's own app to `app_base`."""
    base = base or Path.cwd()
    values = read_table(raw, STUDY_KEYS, where)
    _tune_table(values, where)
    _required(values, where)
    servers = _servers(values["servers"], where)
    requests, app_env = _app_settings(values, where, base)
    app = _app(values, where, base, app_base or base, requests)
    requests = requests or app.requests
    loads = _loads(values, where, app, servers, base)
    check_full(values.get("full"), {load.name for load in loads}, where)
    repeats, trim = values.get("repeats", 3), values.get("trim", 0)
    settings = _server_settings(values.get("server_settings", {}), servers, where)
    hosts = parse_hosts(values, where)
    return Study(
        name=values.get("name") or Path(where).stem,
        description=values.get("description", ""),
        servers=tuple(servers),
        loads=loads,
        app=app.name,
        requests=requests,
        app_spec=app,
        app_env={**app.env, **app_env},
        repeats=repeats,
        starts=values.get("starts", 3),
        trim=trim,
        random_order=values.get("random_order", True),
        seed=values.get("seed", 1),
        workers=values.get("workers", 1),
        threads=values.get("threads", 1),
        engine_threads=values.get("engine_threads"),
        oversubscribe_engine=values.get("oversubscribe_engine", False),
        server_settings=settings,
        server_cpu_count=values.get("server_cpu_count"),
        memory_limit_mb=values.get("memory_limit_mb", 512),
        error_threshold=values.get("error_threshold", 0.05),
        server_cpus=_cpu_list(values.get("server_cpus"), "server_cpus", where),
        engine_cpus=_cpu_list(values.get("engine_cpus"), "engine_cpus", where),
        source=values.get("source", ""),
        skipped=scale_counts(values.get("scale_cpus"))[1],
        raw=raw,
        backlog=values.get("backlog", 2048),
        tcp_nodelay=values.get("tcp_nodelay", True),
        access_log=values.get("access_log", False),
        server_host=hosts[0],
        load_hosts=hosts[1],
        tune=values.get("tune"),
        base=app_base or base,
    )


def _required(values: dict[str, Any], where: str) -> None:
    """The keys every study has, and repeats enough for its trim."""
    for required in ("servers", "load"):
        if required not in values:
            key = next(k for k in STUDY_KEYS if k.name == required)
            raise UsageError(f"{where}: {required} is required: {key.kind.describe()}")
    repeats, trim = values.get("repeats", 3), values.get("trim", 0)
    if repeats - 2 * trim < 1:
        raise UsageError(
            f"{where}: trim {trim} leaves no repeat of {repeats} (repeats - 2 × trim must be ≥ 1)"
        )


def _tune_table(values: dict[str, Any], where: str) -> None:
    """`tune = { ... }`, checked; a tuning's trials are its loads, so it needs no [[load]]."""
    if "tune" not in values:
        return
    values["tune"] = read_table(values["tune"], TUNE_KEYS, where, "tune.")
    if "slo_p99_ms" not in values["tune"]:
        raise UsageError(f"{where}: tune.slo_p99_ms is required: the latency budget (ms)")
    values.setdefault("load", [{"name": "tune", "model": "closed", "levels": [1], "duration_s": 1}])


def _app(
    values: dict[str, Any],
    where: str,
    base: Path,
    app_base: Path,
    requests: tuple[RequestKind, ...],
) -> AppSpec:
    """The study's app: a built-in by name, or one's own (`module:callable`, `file.py`)."""
    name = values.get("app", "pong")
    own = ("interface", "app_asgi", "requirements", "app_workdir")
    if name in APPS:
        given = [k for k in own if k in values]
        if given:
            raise UsageError(f"{where}: {given[0]} is for your own app; {name!r} is built in")
        app = get_app(name)
        if "probe" in values:
            return replace(app, probe=probe_of(values["probe"], requests, where, user=False))
        return app
    if not is_user_spec(name):
        raise UsageError(f"{where}: app: {_unknown(name)}")
    try:
        return user_app(name, app_base, {**values, **_paths(values, base)}, requests, where)
    except UsageError as exc:
        if name.isidentifier() and "no " in str(exc):
            raise UsageError(f"{where}: app: {_unknown(name)}") from None
        raise


def _paths(values: dict[str, Any], base: Path) -> dict[str, Any]:
    """The study's paths (requirements, app_workdir) made absolute against the study's folder."""
    return {k: str(base / values[k]) for k in ("requirements", "app_workdir") if k in values}


def _unknown(name: str) -> str:
    try:
        get_app(name)
    except UsageError as exc:
        return (
            f"{exc}; or your own app as module:callable or path/to/file.py:callable "
            "(no such file here)"
        )
    return name


def _server_settings(
    raw: dict[str, Any], servers: list[str], where: str
) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for server, settings in raw.items():
        if server not in servers:
            raise UsageError(
                f"{where}: server_settings names {server!r}, not a server of the study"
                + nearest(server, servers)
            )
        if not settings:
            raise UsageError(f"{where}: server_settings.{server} gives no settings")
        out[server] = read_table(settings, SERVER_SETTING_KEYS, where, f"server_settings.{server}.")
    return out


def _servers(servers: list[str], where: str) -> list[str]:
    try:
        return resolve(servers)
    except UsageError as exc:
        raise UsageError(f"{where}: servers: {exc}") from None


def _loads(
    values: dict[str, Any], where: str, app: AppSpec, servers: list[str], base: Path
) -> tuple[Load, ...]:
    """The [[load]] tables (a replay's log relative to `base`), scaled, each checked."""
    if not values["load"]:
        raise UsageError(f"{where}: needs at least one [[load]] table")
    loads = tuple(parse_load(load, where, i, base) for i, load in enumerate(values["load"]))
    loads = _scaled(loads, values.get("scale_cpus"), where)
    names = [load.name for load in loads]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"{where}: two [[load]] tables are named {twice[0]!r}: names must differ")
    loads = tuple(_load_servers(load, where) for load in loads)
    for load in loads:
        if load.app is not None and load.app not in APPS:
            raise UsageError(f"{where}: [[load]] {load.name!r}: app: {_unknown(load.app)}")
        if load.servers and not set(load.servers) & set(servers):
            raise UsageError(
                f"{where}: [[load]] {load.name!r} names none of the study's servers "
                f"({', '.join(load.servers)})"
            )
        check_runtime_mode(load, servers, where)
        served = APPS[load.app] if load.app else app
        if served.database is None and load.database:
            raise UsageError(
                f"{where}: [[load]] {load.name!r} names a database, but app {served.name!r} "
                "uses none"
            )
    return loads


def _load_servers(load: Load, where: str) -> Load:
    if not load.servers:
        return load
    try:
        return replace(load, servers=tuple(resolve(list(load.servers))))
    except UsageError as exc:
        raise UsageError(f"{where}: [[load]] {load.name!r}: servers: {exc}") from None


def _app_settings(
    values: dict[str, Any], where: str, base: Path
) -> tuple[tuple[RequestKind, ...], dict[str, str]]:
    """The study's own request mix (empty: the app's) and the app's WSGIBENCH_* settings."""
    given = values.get("requests", [])
    requests = tuple(parse_request(r, where, i, base) for i, r in enumerate(given))
    return requests, values.get("app_env", {})


def scale_counts(counts: Any) -> tuple[Any, tuple[str, ...]]:
    """scale_cpus = "auto": 1, 2, 4, 8, ... server CPUs, as many as leave the engine at least half
    as many CPUs on this machine; and a line for each count it cannot offer."""
    if counts != "auto":
        return counts, ()
    steps, skipped = scaling_steps(topology.read())
    return steps, tuple(f"skipped {line}" for line in skipped)


def _scaled(loads: tuple[Load, ...], counts: Any, where: str) -> tuple[Load, ...]:
    """scale_cpus = [1, 2]: each load once per CPU count N, named LOAD-Ncpu, with the server on N
    CPUs and the engine on the rest (the runner places them; see run.cell.place)."""
    counts, _ = scale_counts(counts)
    usable = len(os.sched_getaffinity(0))
    for load in loads:
        if load.cpus is not None and load.cpus > usable:
            raise UsageError(f"{where}: load {load.name!r} wants {load.cpus} CPUs; {usable} usable")
    if counts is None:
        return loads
    if max(counts) > usable:
        raise UsageError(
            f"{where}: scale_cpus asks for {max(counts)} CPUs; this machine has {usable}"
        )
    return tuple(
        replace(load, name=f"{load.name}-{n}cpu", cpus=n) for load in loads for n in counts
    )
