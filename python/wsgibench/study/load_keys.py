"""The keys of a study file's tables below the top level: [[load]] (per model), [[requests]] and
its `expect`, and [server_settings.NAME]; see study/keys.py for the top level."""

from __future__ import annotations

from wsgibench.study.kinds import (
    Flag,
    Int,
    Key,
    ListOf,
    Number,
    Text,
)
from wsgibench.study.replay_keys import REPLAY_KEYS
from wsgibench.study.roles import DEFAULT as ROLE_DEFAULT
from wsgibench.study.roles import ROLES
from wsgibench.study.roles import WORDS as ROLE_WORDS

MODEL_NAMES = (
    "closed",
    "rate",
    "conn_rate",
    "sessions",
    "count",
    "capacity",
    "broadcast",
    "replay",
)
# Engine models, which sweep the levels a study gives; capacity searches the rate itself.
SWEPT = ("closed", "rate", "conn_rate", "sessions", "count", "broadcast")
DATABASES = ("sqlite", "postgresql", "mariadb")
ARRIVALS = ("uniform", "poisson")
# Where the server runs (run/placement.py): its own CPUs, every CPU the engine leaves, or those
# under a cgroup CPU quota.
PLACEMENTS = ("pinned", "shared", "quota")
ENGINE_IOS = ("auto", "epoll", "io_uring")
PROTOCOLS = ("http", "websocket", "h2c", "h2")
_POSITIVE_INT = Int(low=1)

LEVEL_UNITS = {
    "closed": "connections",
    "rate": "new connections per second",
    "conn_rate": "new connections per second",
    "sessions": "users arriving per second",
    "count": "requests in flight (concurrency)",
    "broadcast": "WebSocket subscribers",
}
_OPEN = ("rate", "conn_rate")
# The loads with a capacity search: a rate's, or a replay's speed (with slo_p99_ms).
_SEARCH = ("capacity", "replay")

LOAD_KEYS: tuple[Key, ...] = (
    Key(
        "name",
        Text(),
        "the model",
        "The load's name (unique in the study), used by "
        "`[full.load.NAME]` and shown in every table.",
    ),
    Key(
        "model",
        Text(MODEL_NAMES),
        "(required)",
        "closed: N connections each sending as soon as "
        "answered (wrk); rate/conn_rate: new connections at a rate, `calls` requests each "
        "(httperf); sessions: users arriving at a rate, `requests` each `think_s` apart (tsung); "
        "count: `requests` in all at a concurrency (ab); broadcast: WebSocket subscribers and one "
        "publisher at `publish_rate`; replay: an access log's requests at their times (`log`, "
        "`speed`).",
        required=MODEL_NAMES,
    ),
    Key(
        "levels",
        ListOf(Number(low=0, above=True)),
        "(required)",
        "The levels swept, ascending: "
        + "; ".join(f"{m}: {u}" for m, u in LEVEL_UNITS.items() if m != "conn_rate")
        + ".",
        "per model",
        "levels = [100, 1000, 10000]",
        required=SWEPT,
    ),
    Key(
        "duration_s",
        Number(low=0, above=True),
        "",
        "Seconds per repeat (closed); the arrival window (rate, sessions); publishing (broadcast).",
        "s",
        "duration_s = 30.0",
        ("closed", *_OPEN, "sessions", "capacity", "broadcast"),
        ("closed", "sessions", "capacity", "broadcast"),
    ),
    Key(
        "publish_rate",
        Number(low=0, above=True),
        "(required)",
        "broadcast: messages a second from the one publisher, each due at every subscriber.",
        "messages/s",
        "publish_rate = 10",
        ("broadcast",),
        ("broadcast",),
    ),
    Key(
        "http",
        Text(("1.0", "1.1")),
        '"1.1"',
        "The HTTP version of the requests (a string).",
        example='http = "1.0"',
    ),
    Key(
        "keep_alive",
        Flag(),
        'true for "1.1"',
        "Keep connections open between requests "
        "(false: `Connection: close`, one request per connection).",
    ),
    Key(
        "timeout_s",
        Number(low=0, above=True),
        "5.0",
        "A request (and a connect) not answered within this is a timeout error.",
        "s",
    ),
    Key(
        "warmup_s",
        Number(low=0),
        "1.0",
        "Warm-up before the measured repeats (count loads: a few requests).",
        "s",
    ),
    Key(
        "database",
        Text(DATABASES),
        "the app's",
        "The db app's database for this load, started and stopped by wsgibench.",
    ),
    Key("cpus", _POSITIVE_INT, "the study's", "This load's server CPUs (scaling).", "CPUs"),
    *REPLAY_KEYS,
    Key(
        "pipeline",
        _POSITIVE_INT,
        "1",
        "Requests sent ahead on a connection (closed); > 1 on rate loads pipelines the calls.",
        "requests",
        models=("closed", *_OPEN),
    ),
    Key(
        "connections_total",
        _POSITIVE_INT,
        "",
        "Connections opened per repeat (httperf's `--num-conns`); with or instead of `duration_s`.",
        "connections",
        models=_OPEN,
    ),
    Key(
        "calls",
        _POSITIVE_INT,
        "1",
        "Requests per connection (httperf's `--num-calls`); capacity: > 1 keeps connections "
        "alive for that many requests.",
        "requests",
        models=(*_OPEN, "capacity"),
    ),
    Key(
        "pool",
        _POSITIVE_INT,
        "",
        "A fixed pool of this many keep-alive connections carries the arrivals, each one request "
        "(wrk2's `-c` with `-R`, a proxy's upstream pool): a request with no free connection "
        "waits in the client, its latency counted from when it was due. The rate is then "
        "requests/s. Without it, each arrival opens a connection for its `calls` (httperf); a "
        "replay's each request one.",
        "connections",
        models=(*_OPEN, "capacity", "replay"),
    ),
    Key(
        "arrival",
        Text(ARRIVALS),
        '"uniform"',
        "Arrivals evenly spaced, or at random (exponential gaps, as tsung).",
        models=(*_OPEN, "sessions", "capacity"),
    ),
    Key(
        "requests",
        _POSITIVE_INT,
        "",
        "Requests per user (sessions); requests in all (count).",
        "requests",
        models=("sessions", "count"),
        required=("sessions", "count"),
    ),
    Key(
        "think_s",
        Number(low=0),
        "",
        "Pause between a user's requests.",
        "s",
        models=("sessions",),
        required=("sessions",),
    ),
    Key(
        "slo_p99_ms",
        Number(low=0, above=True),
        "",
        "capacity: the latency budget, corrected p99 of all of a step's requests at most this "
        "(and the step keeping up: valid replies ≥ 95 % of the requests offered).",
        "ms",
        "slo_p99_ms = 10",
        _SEARCH,
        ("capacity",),
    ),
    Key(
        "slo_p50_ms",
        Number(low=0, above=True),
        "none",
        "capacity: and corrected p50 at most this.",
        "ms",
        models=_SEARCH,
    ),
    Key(
        "max_error_rate",
        Number(low=0, high=1),
        "the study's error_threshold",
        "capacity: and errors at most this share of the requests.",
        models=_SEARCH,
    ),
    Key(
        "resolution",
        Number(low=0, above=True, high=1),
        "0.05",
        "capacity: the bisection stops when the interval is within this share of the rate.",
        models=_SEARCH,
    ),
    Key(
        "start_rate",
        Number(low=0, above=True),
        "100",
        "capacity: the first rate tried (connections/s, each carrying `calls` requests; with a "
        "`pool`, requests/s); doubled until a step misses the budget.",
        "connections/s",
        models=("capacity",),
    ),
    Key(
        "second_rate",
        Number(low=0, above=True),
        "twice start_rate",
        "capacity: the rate tried after a first step that met (e.g. the top of the interval an "
        "earlier, coarser search found: `tune` seeds its later rounds so), and after one that "
        "missed the rate as far below it; then doubling (halving) and bisection as usual.",
        "connections/s",
        models=("capacity",),
    ),
    Key(
        "cost_cells",
        Flag(),
        "true",
        "capacity: after the search, run the cells at 25, 50 and 75 % of the capacity for the "
        "server's CPU per request across the range (`tune` runs them in its last round only).",
        models=_SEARCH,
    ),
    Key(
        "max_rate",
        Number(low=0, above=True),
        "1000000",
        "capacity: the highest rate the search tries (connections/s; with a `pool`, requests/s).",
        "connections/s",
        models=("capacity",),
    ),
    Key(
        "step_repeats",
        _POSITIVE_INT,
        "5 (at least the study's repeats)",
        "capacity: the most repeats a step of the search runs. A step is judged on its repeats "
        "together (the p99 of all their requests) and stops once even flawless repeats left could "
        "not make it meet; the cells at 25, 50 and 75 % of the capacity run the study's repeats.",
        "repeats",
        models=_SEARCH,
    ),
    Key(
        "workers",
        _POSITIVE_INT,
        "the study's",
        "The server's worker processes for this load (tune: one load per setting).",
        "processes",
    ),
    Key(
        "threads",
        _POSITIVE_INT,
        "the study's",
        "The server's threads per worker for this load, where it takes them.",
        "threads",
    ),
    Key(
        "runtime_mode",
        Text(what="a runtime mode the load's servers have"),
        "the server's",
        'The server\'s runtime mode for this load (Granian: "st" or "mt"; tune searches them).',
        example='runtime_mode = "st"',
    ),
    Key(
        "placement",
        Text(PLACEMENTS),
        '"pinned"',
        'Where the server runs: "pinned" to its own CPUs (the layout\'s), "shared" on every CPU '
        'the engine does not use, or "quota": shared under a cgroup CPU quota of cpu_quota cores '
        "(verified, like the memory limit).",
        example='placement = "shared"',
    ),
    Key(
        "engine_io",
        Text(ENGINE_IOS),
        '"auto"',
        'The load engine\'s I/O backend: "io_uring" (multishot receives, batched sends), "epoll", '
        'or "auto": io_uring where the kernel offers it, else epoll. Each result records the '
        "backend that ran (cost.io_backend).",
        example='engine_io = "epoll"',
    ),
    Key(
        "protocol",
        Text(PROTOCOLS),
        '"http"',
        'What each request is: an HTTP request; "websocket": a message on a connection the '
        "load upgraded (its one [[requests]] entry the upgrade's path), echoed by the app and "
        "matched by its number (lost, duplicated and corrupt echoes apart), over HTTP/1.1 "
        'keep-alive; "h2c": an HTTP/2 stream in clear text with prior knowledge, `streams` at '
        'once per connection (no SETTINGS from the server: unavailable); "h2": the same over '
        "TLS, h2 chosen by ALPN (implies tls; a server that does not choose h2 is unavailable).",
        example='protocol = "websocket"',
    ),
    Key(
        "tls",
        Flag(),
        'false (true for protocol = "h2")',
        "TLS 1.3: the server serves a certificate of wsgibench's test CA, which the engine "
        "verifies (a server that takes none is unavailable); handshakes, resumptions counted.",
    ),
    Key(
        "streams",
        Int(low=1, high=1000),
        "1",
        'protocol = "h2c" or "h2": the concurrent streams on each connection (fewer when the '
        "server's SETTINGS_MAX_CONCURRENT_STREAMS is lower).",
        "streams",
    ),
    Key(
        "message_bytes",
        Int(low=16, high=16 << 20),
        "64",
        'protocol = "websocket": the bytes of each message (its 16-digit number, then letters).',
        "bytes",
    ),
    Key(
        "cpu_quota",
        Number(low=0.01),
        "the pinned CPUs' count",
        'placement = "quota": the cores the server may use (cpu.max on cgroup v2, '
        "cpu.cfs_quota_us on v1).",
        "cores",
    ),
    Key(
        "app",
        Text(what="a built-in app's name"),
        "the study's",
        "A built-in app this load serves instead of the study's, with its own requests "
        '(the frameworks study: one load per framework, `role = "framework"`, pong beside them '
        'as `role = "ceiling"`).',
        example='app = "flask"',
    ),
    Key("role", Text(ROLES), ROLE_DEFAULT, ROLE_WORDS, example='role = "framework"'),
    Key(
        "servers",
        ListOf(Text(what="a server name")),
        "the study's",
        "The study's servers this load runs on (those its app's documentation recommends).",
        example='servers = ["gunicorn-sync", "uwsgi-http11"]',
    ),
)

SERVER_SETTING_KEYS: tuple[Key, ...] = (
    Key("workers", _POSITIVE_INT, "the study's", "This server's worker processes.", "processes"),
    Key("threads", _POSITIVE_INT, "the study's", "This server's threads per worker.", "threads"),
)
