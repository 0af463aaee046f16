"""Every key a study file may have, in one place: its type, unit, default, allowed values and an
example. The parser checks each table against these lists (unknown keys refused with the nearest
known one) and docs/studies.md is written from them (`wsgibench studies --keys`). This module has
the top level; study/load_keys.py the tables below it."""

from __future__ import annotations

from wsgibench.study.kinds import (
    Address,
    Auto,
    EnvValue,
    Flag,
    Int,
    Key,
    ListOf,
    Number,
    Section,
    TableOf,
    Text,
)
from wsgibench.study.load_keys import LOAD_KEYS, SERVER_SETTING_KEYS
from wsgibench.study.request_keys import BODY_FLOAT_KEYS, EXPECT_KEYS, PROBE_KEYS, REQUEST_KEYS

_POSITIVE_INT = Int(low=1)
_SERVER_SETTINGS = TableOf(
    Section("[server_settings.NAME]"), names="server names"
)  # the inner tables are checked by SERVER_SETTING_KEYS

STUDY_KEYS: tuple[Key, ...] = (
    Key(
        "name",
        Text(),
        "the file's name",
        "The study's name, stored with its results; "
        "`--resume` continues the unfinished run of this name.",
        example='name = "mine"',
    ),
    Key(
        "description",
        Text(),
        '""',
        "One line on what the study measures, shown by `studies` "
        "and at the top of the report (with the command line's changes beside it).",
    ),
    Key(
        "source",
        Text(),
        '""',
        "Where the method comes from (a seed, an article), shown in the report.",
    ),
    Key(
        "deviations",
        ListOf(Text(what="a sentence")),
        "none",
        "What this study does differently from the seed it reproduces, and why: one sentence "
        "each, stored with the run and listed in the report's section against the seed.",
        example='deviations = ["The server gets 1 CPU where the seed gave it 2: this machine has '
        '2 in all."]',
    ),
    Key(
        "servers",
        ListOf(Text(what="a server name")),
        "(required)",
        "Catalog names "
        '(`wsgibench servers`); a glob such as `gunicorn-*` names a family; `["*"]` is every '
        "entry. The nginx ceiling is `nginx-baseline`.",
        example='servers = ["nginx-baseline", "bjoern", "gunicorn-*"]',
    ),
    Key(
        "app",
        Text(what="an app name or module:callable"),
        '"pong"',
        "The app every server runs: a built-in (`wsgibench apps`), or your own named as a "
        "server names it: `package.module:callable`, `path/to/file.py:callable` (relative to "
        "the study file; `:app` when left out), or a factory's call, `module:create_app()` "
        "(literal arguments only). Its folder goes first on the server's path.",
        example='app = "myapp:app"',
    ),
    Key(
        "interface",
        Text(choices=("wsgi", "asgi")),
        "read from the callable",
        "Your app's interface: ASGI when the callable (or its class's `__call__`) is a "
        "coroutine function, WSGI otherwise; set it when that guess is wrong.",
        example='interface = "asgi"',
    ),
    Key(
        "app_asgi",
        Text(what="module:callable"),
        "none",
        "The ASGI side of an app that has both (Django's `asgi.py`, Falcon's `asgi.App`): "
        "WSGI servers run `app`, ASGI servers this.",
        example='app_asgi = "mysite.asgi:application"',
    ),
    Key(
        "requirements",
        Text(what="a path"),
        "none",
        "Your app's dependencies: a requirements.txt or a pyproject.toml (relative to the study "
        "file), locked with hashes and installed with uv into a folder per app and Python "
        "version, apart from the servers' venvs.",
        example='requirements = "requirements.txt"',
    ),
    Key(
        "app_workdir",
        Text(what="a path"),
        "the app's folder",
        "The working directory every server runs your app in (relative to the study file).",
        example='app_workdir = "."',
    ),
    Key(
        "probe",
        Section("probe"),
        '{ path = "/ping", status = 200, body = "Pong!" }; your app: its first request\'s '
        "path and status",
        "The request that says a server is up, and on which HTTP/1.0, keep-alive and "
        "pipelining are checked: its path, the status of a valid reply, and its exact body "
        "when given.",
        example='probe = { path = "/health", status = 200 }',
    ),
    Key(
        "app_env",
        TableOf(EnvValue(), names="variables"),
        "the app's own",
        "The app's `WSGIBENCH_*` settings, given to every server process.",
        example='app_env = { WSGIBENCH_SLEEP_S = "0.1" }',
    ),
    Key(
        "requests",
        Section("[[requests]]", many=True),
        "the app's",
        "The request mix: one table per kind of request, with what a valid reply is.",
    ),
    Key(
        "load",
        Section("[[load]]", many=True),
        "(required)",
        "The loads: one table per load model and its levels.",
    ),
    Key(
        "repeats",
        _POSITIVE_INT,
        "3",
        "Measured repeats per cell, spread over its server starts (`starts`): each start has "
        "its warm-up, then its share of the repeats.",
        "repeats",
        "repeats = 4",
    ),
    Key(
        "starts",
        _POSITIVE_INT,
        "3",
        "Independent server starts per cell (each stopped, started fresh on new ports, checked "
        "and warmed up), the unit a claim between servers is tested on: Student's t on the "
        "logs of the starts' medians (docs/measurement.md). At most `repeats` (fewer repeats: "
        "one start each); a cell with one start says its claims are untested. A capacity "
        "load's steps start their server once.",
        "repeats",
        "starts = 5",
    ),
    Key(
        "trim",
        Int(low=0),
        "0",
        "Repeats dropped at each end before the trimmed mean "
        "(`repeats - 2 × trim` ≥ 1); seed 004 ran 4 and dropped the highest and the lowest.",
        "repeats",
        "trim = 1",
    ),
    Key(
        "random_order",
        Flag(),
        "true",
        "Shuffle the servers within each level (seed 004's random order), with `seed`.",
    ),
    Key(
        "seed",
        Int(low=0),
        "1",
        "Seed of the server order and of each cell's engine (arrivals of open loads).",
    ),
    Key(
        "workers",
        Auto(_POSITIVE_INT),
        "1",
        'Worker processes per server; "auto" gives each '
        "server its own convention for its CPUs (gunicorn 2N+1, uWSGI/mod_wsgi/granian N).",
        "processes",
        'workers = "auto"',
    ),
    Key(
        "threads",
        _POSITIVE_INT,
        "1",
        "Threads per worker, for the servers that take them.",
        "threads",
    ),
    Key("engine_threads", _POSITIVE_INT, "one per engine CPU", "The engine's threads.", "threads"),
    Key(
        "oversubscribe_engine",
        Flag(),
        "false",
        "Allow more engine threads than engine CPUs (refused otherwise: threads sharing a CPU "
        "hide a saturated one); each cell then stores a warning.",
    ),
    Key(
        "server_settings",
        _SERVER_SETTINGS,
        "none",
        "Per server of the study, the workers and "
        "threads its seed gave it, over `workers`/`threads`.",
        example='server_settings = { "uwsgi-http" = { workers = 2 } }',
    ),
    Key(
        "seed_versions",
        TableOf(Text(what="a release"), names="servers"),
        "none",
        "The release of each server the seed ran (`run --versions seed` runs each beside today's).",
        example='seed_versions = { "gunicorn-sync" = "19.9.0" }',
    ),
    Key(
        "parity",
        TableOf(Text(what="why it differs"), names="settings"),
        "none",
        "The settings (servers/parity.py: loop, parser, concurrency, keep_alive, backlog, "
        "access_log) in which the study's servers differ on purpose, each with why; any other "
        "difference fails the parity check.",
        example='parity = { loop = "each server on the loop it runs in production" }',
    ),
    Key(
        "server_cpu_count",
        _POSITIVE_INT,
        "the machine's layout",
        "The server gets this many CPUs (whole cores first), the engine the rest.",
        "CPUs",
    ),
    Key(
        "server_cpus",
        ListOf(Int(low=0)),
        "the machine's layout",
        "The server's CPUs (`--server-cpus`).",
        "CPU numbers",
        "server_cpus = [0, 1]",
    ),
    Key(
        "engine_cpus",
        ListOf(Int(low=0)),
        "the machine's layout",
        "The engine's CPUs (`--engine-cpus`): one engine thread each.",
        "CPU numbers",
        "engine_cpus = [2, 3]",
    ),
    Key(
        "scale_cpus",
        Auto(ListOf(_POSITIVE_INT)),
        "none",
        "Run each load once per server CPU "
        'count (load `NAME-Ncpu`); "auto": 1, 2, 4, … while the engine keeps at least N/2 CPUs.',
        "CPUs",
        "scale_cpus = [1, 2]",
    ),
    Key(
        "memory_limit_mb",
        _POSITIVE_INT,
        "512",
        "Memory limit of the server's whole process tree (a cgroup), verified and recorded.",
        "MiB",
    ),
    Key(
        "error_threshold",
        Number(low=0, high=1),
        "0.05",
        "Error fraction above which a server is disqualified from that level up (1.0: never).",
        "fraction",
        "error_threshold = 0.1",
    ),
    Key(
        "backlog",
        _POSITIVE_INT,
        "2048",
        "The listen backlog given to every server that takes "
        "one (a small one shows as listen-queue overflows).",
        "connections",
    ),
    Key(
        "tcp_nodelay",
        Flag(),
        "true",
        "TCP_NODELAY on the servers' sockets where a recipe can "
        "set it; false demonstrates the 40 ms Nagle/delayed-ACK stall.",
    ),
    Key(
        "access_log",
        Flag(),
        "false",
        "An access log line per request, where a recipe can "
        "write one (gunicorn): the cost of logging.",
    ),
    Key(
        "server_host",
        Address(),
        '"127.0.0.1"',
        "The address the server listens on and the load "
        "goes to (`--server-host`); the only non-loopback target the engine accepts.",
        example='server_host = "10.0.0.2"',
    ),
    Key(
        "load_hosts",
        _POSITIVE_INT,
        "none",
        "Send the load from N local Dask workers (`--load-hosts`).",
        "hosts",
    ),
    Key(
        "cluster",
        Text(what="a Dask scheduler address"),
        "none",
        "Send the load from every worker of this Dask scheduler (`--cluster`).",
        example='cluster = "tcp://10.0.0.1:8786"',
    ),
    Key(
        "start_skew_bound_ms",
        Number(low=0, above=True),
        "10",
        "Load hosts that start further apart than this make the cell invalid.",
        "ms",
    ),
    Key(
        "tune",
        Section("tune"),
        "none",
        "Tune instead of sweeping loads (`wsgibench tune`): the settings to search and the "
        "budget; the study's app, app_env and memory limit apply. No [[load]] is needed.",
        example="tune = { slo_p99_ms = 200, threads = [1, 8] }",
    ),
    Key(
        "full",
        Section("[full]"),
        "none",
        "The study at its seed's full size (`--full`): keys "
        "that replace the top-level ones, and `[full.load.NAME]` tables that replace a load's.",
    ),
)

TUNE_KEYS: tuple[Key, ...] = (
    Key("slo_p99_ms", Number(low=0, above=True), "(required)", "The latency budget.", "ms"),
    Key(
        "servers",
        ListOf(Text(what="a server name")),
        "the study's",
        "The entries to tune (a family such as gunicorn-* adds the worker class).",
    ),
    Key("workers", ListOf(Int(low=1)), "1, N, 2N+1", "The worker counts to try.", "processes"),
    Key("threads", ListOf(Int(low=1)), "1..32", "The thread counts to try.", "threads"),
    Key("max_threads", _POSITIVE_INT, "32", "The most threads per worker tried.", "threads"),
    Key("trials", _POSITIVE_INT, "64", "At most this many trials in all.", "trials"),
    Key("time_s", Number(low=0, above=True), "1800", "No new round after this long.", "s"),
    Key("start_rate", Number(low=0, above=True), "10", "Each search's first rate.", "conn/s"),
    Key(
        "pool",
        _POSITIVE_INT,
        "none",
        "Every trial's arrivals on a fixed pool of this many keep-alive connections (the load "
        "key `pool`), each arrival one request; without it, a connection per arrival.",
        "connections",
    ),
)

SECTIONS: tuple[tuple[str, tuple[Key, ...]], ...] = (
    ("study (top level)", STUDY_KEYS),
    ("[[load]]", LOAD_KEYS),
    ("[[requests]]", REQUEST_KEYS),
    ("[[requests]] expect", EXPECT_KEYS),
    ("[[requests]] expect body_float", BODY_FLOAT_KEYS),
    ("[server_settings.NAME]", SERVER_SETTING_KEYS),
    ("probe", PROBE_KEYS),
    ("tune", TUNE_KEYS),
)
