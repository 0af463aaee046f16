"""Studies: TOML files naming servers, app, loads, repeats and isolation; built-ins ship in studies/."""

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
from wsgibench.servers import catalog, get
from wsgibench.study.apps import AppSpec, get_app
from wsgibench.study.loads import Load, RequestKind, parse_load
from wsgibench.study.split import HOST_KEYS, LoadHostsSpec, parse_hosts

TOP_KEYS = {
    "name",
    "description",
    "seed",
    "servers",
    "app",
    "repeats",
    "trim",
    "random_order",
    "workers",
    "threads",
    "engine_threads",
    "server_settings",
    "server_cpu_count",
    "full",
    "memory_limit_mb",
    "error_threshold",
    "server_cpus",
    "engine_cpus",
    "load",
    "requests",
    "source",
    "app_env",
    "scale_cpus",
    "backlog",
    "tcp_nodelay",
    "access_log",
    *HOST_KEYS,
}


@dataclass(frozen=True)
class Study:
    name: str
    description: str
    servers: tuple[str, ...]
    loads: tuple[Load, ...]
    app: str = "pong"
    requests: tuple[RequestKind, ...] = (RequestKind(),)
    app_env: dict[str, str] = field(default_factory=dict)
    # Pitfall switches: the defaults are the right settings; studies that demonstrate a
    # pitfall (and the diagnosis tests) turn them the wrong way on purpose.
    backlog: int = 2048
    tcp_nodelay: bool = True
    access_log: bool = False  # honoured by gunicorn recipes
    repeats: int = 3
    trim: int = 0  # repeats dropped at each end before the trimmed mean (seed 004: 1)
    random_order: bool = True
    seed: int = 1
    # An exact count, or "auto": each server's documented convention for its CPUs (see
    # ServerRecipe.auto_workers); the nginx ceiling always gets one worker per server CPU.
    workers: int | Literal["auto"] = 1
    threads: int = 1
    engine_threads: int | None = None  # default: one engine thread per engine CPU
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

    def server_names(self) -> list[str]:
        return list(self.servers)

    def cell_count(self) -> int:
        return len(self.servers) * sum(len(load.levels) for load in self.loads)


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


def load_study(name_or_path: str, overrides: dict[str, Any] | None = None) -> Study:
    path = study_path(name_or_path)
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: malformed TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    raw.update(overrides or {})
    return parse_study(raw, str(path))


def _cpu_list(value: Any, key: str, where: str) -> list[int] | None:
    if value is None:
        return None
    usable = sorted(os.sched_getaffinity(0))
    if not isinstance(value, list) or not all(isinstance(c, int) for c in value) or not value:
        raise UsageError(f"{where}: {key} must be a non-empty list of CPU numbers")
    bad = [c for c in value if c not in usable]
    if bad:
        raise UsageError(f"{where}: {key} names CPU {bad[0]}, but this machine has CPUs {usable}")
    return value


def _positive_int(value: Any, key: str, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise UsageError(f"{where}: {key} must be a positive integer")
    return value


def parse_study(raw: dict[str, Any], where: str) -> Study:
    """The study a parsed TOML table describes; any malformed value is a UsageError (one line)."""
    try:
        return _parse_study(raw, where)
    except (TypeError, ValueError, AttributeError, OverflowError) as exc:  # found by tests/fuzz
        raise UsageError(f"{where}: a value has the wrong type or form ({exc})") from None


def _parse_study(raw: dict[str, Any], where: str) -> Study:
    unknown = set(raw) - TOP_KEYS
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    servers = _servers(raw.get("servers"), where)
    app = get_app(str(raw.get("app", "pong")))
    loads = _loads(raw, where, app)
    requests, app_env = _app_settings(raw, where, app)
    repeats, trim = int(raw.get("repeats", 3)), int(raw.get("trim", 0))
    if repeats < 1 or trim < 0 or repeats - 2 * trim < 1:
        raise UsageError(f"{where}: need repeats >= 1 and repeats - 2*trim >= 1")
    workers_raw, threads = raw.get("workers", 1), int(raw.get("threads", 1))
    workers: int | Literal["auto"] = "auto" if workers_raw == "auto" else int(workers_raw)
    if (workers != "auto" and workers < 1) or threads < 1:
        raise UsageError(f'{where}: workers must be "auto" or at least 1, threads at least 1')
    engine_threads = raw.get("engine_threads")
    if engine_threads is not None:
        engine_threads = _positive_int(engine_threads, "engine_threads", where)
    settings = _server_settings(raw.get("server_settings", {}), servers, where)
    cpu_count = raw.get("server_cpu_count")
    if cpu_count is not None:
        cpu_count = _positive_int(cpu_count, "server_cpu_count", where)
    threshold = float(raw.get("error_threshold", 0.05))
    if not 0 <= threshold <= 1:
        raise UsageError(f"{where}: error_threshold is a fraction between 0 and 1")
    memory = raw.get("memory_limit_mb", 512)
    if memory is not None and (not isinstance(memory, int) or memory <= 0):
        raise UsageError(f"{where}: memory_limit_mb must be a positive integer (or absent)")
    hosts = parse_hosts(raw, where)
    return Study(
        name=str(raw.get("name") or Path(where).stem),
        description=str(raw.get("description", "")),
        servers=tuple(servers),
        loads=loads,
        app=app.name,
        requests=requests,
        app_env=app_env,
        repeats=repeats,
        trim=trim,
        random_order=bool(raw.get("random_order", True)),
        seed=int(raw.get("seed", 1)),
        workers=workers,
        threads=threads,
        engine_threads=engine_threads,
        server_settings=settings,
        server_cpu_count=cpu_count,
        memory_limit_mb=memory or None,
        error_threshold=threshold,
        server_cpus=_cpu_list(raw.get("server_cpus"), "server_cpus", where),
        engine_cpus=_cpu_list(raw.get("engine_cpus"), "engine_cpus", where),
        source=str(raw.get("source", "")),
        skipped=scale_counts(raw.get("scale_cpus"))[1],
        raw=raw,
        backlog=_positive_int(raw.get("backlog", 2048), "backlog", where),
        tcp_nodelay=bool(raw.get("tcp_nodelay", True)),
        access_log=bool(raw.get("access_log", False)),
        server_host=hosts[0],
        load_hosts=hosts[1],
    )


def _server_settings(raw: Any, servers: list[str], where: str) -> dict[str, dict[str, int]]:
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: server_settings must be a table of server -> settings")
    out: dict[str, dict[str, int]] = {}
    for server, settings in raw.items():
        if server not in servers or not isinstance(settings, dict) or not settings:
            raise UsageError(
                f"{where}: server_settings names {server!r}, not a server of the "
                "study, or gives it no settings"
            )
        unknown = set(settings) - {"workers", "threads"}
        if unknown:
            raise UsageError(f"{where}: server_settings.{server}: unknown {', '.join(unknown)}")
        out[str(server)] = {
            k: _positive_int(v, f"server_settings.{server}.{k}", where) for k, v in settings.items()
        }
    return out


def _servers(servers: Any, where: str) -> list[str]:
    if servers == ["*"]:  # every catalog entry; unavailable ones are recorded as such
        servers = list(catalog())
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
        raise UsageError(f"{where}: servers must be a non-empty list of catalog names")
    for s in servers:
        get(s)  # unknown names fail here, with a suggestion
    return servers


def _loads(raw: dict[str, Any], where: str, app: AppSpec) -> tuple[Load, ...]:
    loads_raw = raw.get("load")
    if not isinstance(loads_raw, list) or not loads_raw:
        raise UsageError(f"{where}: needs at least one [[load]] table")
    loads = tuple(
        parse_load(load, f"{where} [[load]] #{i + 1}") for i, load in enumerate(loads_raw)
    )
    loads = _scaled(loads, raw.get("scale_cpus"), where)
    if len({load.name for load in loads}) != len(loads):
        raise UsageError(f"{where}: [[load]] names must be unique")
    if app.database is None and any(load.database for load in loads):
        raise UsageError(f"{where}: a [[load]] names a database, but app {app.name!r} uses none")
    return loads


def _app_settings(
    raw: dict[str, Any], where: str, app: AppSpec
) -> tuple[tuple[RequestKind, ...], dict[str, str]]:
    """The request mix (the study's, else the app's) and the app's WSGIBENCH_* settings."""
    try:
        requests = tuple(RequestKind(**r) for r in raw.get("requests", [])) or app.requests
    except TypeError as exc:
        raise UsageError(f"{where}: bad [[requests]] entry: {exc}") from None
    app_env = raw.get("app_env", {})
    if not isinstance(app_env, dict):
        raise UsageError(f"{where}: app_env must be a table of strings")
    return requests, {**app.env, **{str(k): str(v) for k, v in app_env.items()}}


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
    if (
        not isinstance(counts, list)
        or not counts
        or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in counts)
    ):
        raise UsageError(f"{where}: scale_cpus must be a non-empty list of CPU counts")
    if max(counts) > usable:
        raise UsageError(
            f"{where}: scale_cpus asks for {max(counts)} CPUs; this machine has {usable}"
        )
    return tuple(
        replace(load, name=f"{load.name}-{n}cpu", cpus=n) for load in loads for n in counts
    )
