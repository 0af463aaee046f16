"""Load definitions of a study and how each level becomes an engine plan (results/engine_plan.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from wsgibench.errors import UsageError
from wsgibench.results.engine_plan import (
    LEVEL_FIELDS,
    MODELS,
    EnginePlan,
    HttpSettings,
    LoadModel,
    Target,
)
from wsgibench.results.plan_expect import Expect
from wsgibench.results.plan_request import PlanRequest
from wsgibench.servers import get
from wsgibench.study.kinds import read_table
from wsgibench.study.load_keys import LOAD_KEYS
from wsgibench.study.replay import ReplaySpec, parse_replay
from wsgibench.study.replay_keys import REPLAY_KEYS
from wsgibench.study.request_keys import BODY_FLOAT_KEYS, EXPECT_KEYS, REQUEST_KEYS
from wsgibench.study.roles import role_of


@dataclass(frozen=True)
class RequestKind:
    name: str = "pong"
    method: str = "GET"
    path: str = "/"
    weight: float = 1.0
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    expect: dict[str, Any] = field(default_factory=lambda: {"status": 200, "body": "Pong!"})

    def plan(self) -> PlanRequest:
        return PlanRequest(
            name=self.name,
            method=self.method,
            path=self.path,
            headers=tuple(self.headers.items()),
            body=self.body,
            weight=self.weight,
            expect=Expect.from_dict(self.expect),
        )


@dataclass(frozen=True)
class CapacitySpec:
    """A capacity load's search: the latency budget, the resolution, where it starts and stops."""

    slo_p99_ms: float
    slo_p50_ms: float | None = None
    max_error_rate: float | None = None  # None: the study's error threshold
    resolution: float = 0.05
    start_rate: float = 100.0
    max_rate: float = 1e6
    # The most repeats a step runs; it stops as soon as its verdict is known.
    step_repeats: int = 5
    # The rate tried after a first step that met (None: twice it), e.g. the top of the interval
    # an earlier, coarser search found.
    second_rate: float | None = None
    # The cells at 25, 50 and 75 % of the capacity, for CPU per request across the range.
    cost_cells: bool = True
    min_rate: float = 1.0  # the lowest rate the search tries (a replay's speed: far lower)
    per_kind: bool = False  # a replay's: every request kind's own latency within the budget


_CAPACITY_KEYS = (
    "slo_p99_ms",
    "slo_p50_ms",
    "max_error_rate",
    "resolution",
    "start_rate",
    "max_rate",
    "step_repeats",
    "second_rate",
    "cost_cells",
)


# Load keys for the harness, not the engine's load model.
_NOT_ENGINE_KEYS = {
    "database",
    "cpus",
    "app",
    "role",
    "servers",
    "workers",
    "threads",
    "runtime_mode",
    "placement",
    "cpu_quota",
    "engine_io",
    "protocol",
    "message_bytes",
    "streams",
    "tls",
    *_CAPACITY_KEYS,
    *(k.name for k in REPLAY_KEYS),
}


@dataclass(frozen=True)
class Load:
    """One load model swept over levels (connections, rate, users/s or concurrency)."""

    name: str
    model: str
    levels: tuple[float, ...]
    params: dict[str, Any]
    http: str = "1.1"
    keep_alive: bool = True
    timeout_s: float = 5.0
    warmup_s: float = 1.0
    database: str | None = None  # the db app's backend for this load (see _databases)
    cpus: int | None = None  # scaling studies: the server gets this many CPUs and workers
    app: str | None = None  # a built-in app of its own (the frameworks study); None: the study's
    servers: tuple[str, ...] = ()  # the study's servers it runs on (empty: all of them)
    role: str | None = None  # framework, ceiling, broadcast or echo (study/roles.py)
    # model = "capacity": the engine runs `rate` steps the search chooses (results/capacity.py).
    capacity: CapacitySpec | None = None
    # The server's workers and threads for this load (tuning: one load per setting).
    workers: int | None = None
    threads: int | None = None
    runtime_mode: str | None = None  # one of its servers' runtime_modes (granian: st, mt)
    placement: str = "pinned"  # pinned, shared or quota (run/placement.py)
    cpu_quota: float | None = None  # placement quota: the cores allowed (None: the pinned count)
    engine_io: str = "auto"  # the engine's I/O backend: auto, epoll or io_uring
    # http; websocket: each request an echoed message; h2c, h2 (over TLS): each a stream
    protocol: str = "http"
    message_bytes: int = 64  # websocket: each message's size
    streams: int = 1  # h2c, h2: concurrent streams per connection
    tls: bool = False  # TLS 1.3 (run/tls.py gives the server its certificate)
    # model = "replay": the engine runs `trace` at each speed (the level), or at the speeds a
    # capacity search chooses; its request kinds are the log's (study/replay.py).
    replay: ReplaySpec | None = None

    @property
    def websocket(self) -> bool:
        return self.protocol == "websocket"

    @property
    def level_field(self) -> str:
        return LEVEL_FIELDS[self.model]

    @property
    def wants_keep_alive(self) -> bool:
        if self.model in ("rate", "conn_rate", "trace"):  # a trace's: one request each, or a pool
            calls = int(self.params.get("calls", 1))
            return self.keep_alive and (calls > 1 or "pool" in self.params)
        return self.keep_alive

    def plan(
        self,
        *,
        level: float,
        port: int,
        requests: list[RequestKind],
        cpus: list[int] | None,
        seed: int,
        warmup: bool = False,
        threads: int = 1,
        host: str = "127.0.0.1",
        tls_ca_pem: str | None = None,
    ) -> EnginePlan:
        """The engine plan of one level; a target off loopback is one the study named. A TLS
        load needs the CA of the server's certificate (`tls_ca_pem`)."""
        if self.tls and tls_ca_pem is None:
            raise ValueError(f"load {self.name} is TLS: the plan needs the server's CA")
        params = {**self.params, **(self.replay.plan_fields() if self.replay else {})}
        model = LoadModel(kind=self.model, level=_num(level), **params)
        return EnginePlan(
            target=Target(host=host, port=port),
            model=model.shortened(self.warmup_s) if warmup else model,
            http=HttpSettings(version=self.http, keep_alive=self.keep_alive),
            requests=tuple(r.plan() for r in requests),
            timeout_s=self.timeout_s,
            connect_timeout_s=self.timeout_s,
            threads=model.threads_for(threads),
            cpus=tuple(cpus or ()),
            seed=seed,
            engine_io=self.engine_io,
            websocket_message_bytes=self.message_bytes if self.websocket else None,
            http2_streams=self.streams if self.protocol in ("h2c", "h2") else None,
            tls_ca_pem=tls_ca_pem if self.tls else None,
        )

    def nominal_seconds(self) -> float:
        """A rough per-repeat duration, for progress and time budgets."""
        if self.replay is not None:
            speed = min(self.levels or (self.capacity.start_rate if self.capacity else 1.0,))
            return self.replay.traffic().span_s / speed
        return float(self.params.get("duration_s", 10.0))


def _num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _check_protocol(values: dict[str, Any], http: str, where: str) -> None:
    """A WebSocket load upgrades an HTTP/1.1 keep-alive connection, an h2c load keeps its
    connections for many streams; message_bytes and streams are theirs alone."""
    protocol = values.get("protocol", "http")
    if values.get("model") == "broadcast":
        if protocol != "websocket":
            raise UsageError(f'{where}: model broadcast needs protocol = "websocket"')
        if int(values.get("message_bytes", 64)) < 32:
            raise UsageError(
                f"{where}: broadcast messages carry a 32-byte head: message_bytes >= 32"
            )
        if values.get("tls"):
            raise UsageError(f"{where}: model broadcast runs over plain TCP: no tls")
    for key, owners in (("message_bytes", ("websocket",)), ("streams", ("h2c", "h2"))):
        if key in values and protocol not in owners:
            said = " or ".join(f'"{o}"' for o in owners)
            raise UsageError(f"{where}: {key} is for protocol = {said} only")
    if protocol == "h2" and values.get("tls") is False:
        raise UsageError(f'{where}: protocol = "h2" is HTTP/2 over TLS: tls cannot be false')
    if protocol == "h2c" and values.get("tls"):
        raise UsageError(f'{where}: protocol = "h2c" is clear text: for TLS, protocol = "h2"')
    if protocol == "http":
        return
    if http != "1.1" or values.get("keep_alive") is False:
        raise UsageError(f'{where}: protocol = "{protocol}" needs http = "1.1" with keep-alive')
    if protocol in ("h2c", "h2") and int(values.get("pipeline", 1)) > 1:
        raise UsageError(f'{where}: protocol = "{protocol}" takes streams, not pipeline')


def _check_pool(values: dict[str, Any], http: str, where: str) -> None:
    """A pool keeps HTTP/1.1 keep-alive connections, one request in flight on each, for the
    whole duration."""
    if "pool" not in values:
        return
    clash = [k for k in ("calls", "pipeline") if int(values.get(k, 1)) > 1]
    clash += ["connections_total"] if "connections_total" in values else []
    if clash:
        raise UsageError(
            f"{where}: pool carries one request per arrival for duration_s: no {', '.join(clash)}"
        )
    if (
        http != "1.1"
        or values.get("keep_alive") is False
        or values.get("protocol", "http") != "http"
    ):
        raise UsageError(f'{where}: pool needs http = "1.1" with keep-alive (protocol "http")')


def parse_load(raw: dict[str, Any], study: str, index: int, base: Path | None = None) -> Load:
    """One [[load]] table, every key checked against study/keys.py (LOAD_KEYS) and against its
    model: a key the model does not take, or one it needs and lacks, is named. A replay's files
    are relative to `base` (the study's folder)."""
    label = f'"{raw["name"]}"' if isinstance(raw.get("name"), str) else f"#{index + 1}"
    where = f"{study} [[load]] {label}"
    values = read_table(raw, LOAD_KEYS, where)
    model = values.get("model")
    if model is None:
        raise UsageError(f"{where}: model is required: one of {', '.join(MODELS)}")
    for key in LOAD_KEYS:
        if key.name in values and key.models and model not in key.models:
            takers = ", ".join(key.models)
            raise UsageError(f"{where}: {key.name} is not a key of model {model} (only {takers})")
        if key.name not in values and model in key.required:
            raise UsageError(f"{where}: model {model} needs {key.name}: {key.kind.describe()}")
    if model in ("capacity", "replay") and "levels" in values:
        said = "start_rate" if model == "capacity" else "speed"
        raise UsageError(f"{where}: a {model} load takes {said}, not levels")
    if model in ("rate", "conn_rate") and not ({"duration_s", "connections_total"} & set(values)):
        raise UsageError(f"{where}: model {model} needs duration_s or connections_total")
    http = values.get("http", "1.1")
    _check_protocol(values, http, where)
    _check_pool(values, http, where)
    common = {"name", "model", "levels", "http", "keep_alive", "timeout_s", "warmup_s"}
    model, capacity, replay = _engine_model(model, values, where, base or Path.cwd())
    return Load(
        name=values.get("name") or values["model"],
        model=model,
        levels=tuple(values.get("levels", ())),
        capacity=capacity,
        params={k: v for k, v in values.items() if k not in common | _NOT_ENGINE_KEYS},
        http=http,
        keep_alive=values.get("keep_alive", http == "1.1"),
        timeout_s=values.get("timeout_s", 5.0),
        warmup_s=values.get("warmup_s", 1.0),
        database=values.get("database"),
        cpus=values.get("cpus"),
        app=values.get("app"),
        role=role_of(values, where),
        servers=tuple(values.get("servers", ())),
        workers=values.get("workers"),
        threads=values.get("threads"),
        runtime_mode=values.get("runtime_mode"),
        placement=_placement(values, where),
        cpu_quota=values.get("cpu_quota"),
        engine_io=values.get("engine_io", "auto"),
        protocol=values.get("protocol", "http"),
        message_bytes=int(values.get("message_bytes", 64)),
        streams=int(values.get("streams", 1)),
        tls=bool(values.get("tls", values.get("protocol") == "h2")),
        replay=replay,
    )


def _engine_model(
    model: str, values: dict[str, Any], where: str, base: Path
) -> tuple[str, CapacitySpec | None, ReplaySpec | None]:
    """The engine model a load runs, its capacity search and its replay, if it has them: a
    capacity load's steps are rate cells, a replay's speeds (or search steps) trace cells."""
    if model == "capacity":
        return "rate", CapacitySpec(**{k: values[k] for k in _CAPACITY_KEYS if k in values}), None
    if model != "replay":
        return model, None, None
    if values.get("protocol", "http") == "websocket":
        raise UsageError(f'{where}: a replay sends HTTP requests: not protocol = "websocket"')
    capacity = _replay_search(values, where)
    if capacity is None:
        values["levels"] = sorted(values.get("speed", [1.0]))
    return "trace", capacity, parse_replay(values, where, base)


def _replay_search(values: dict[str, Any], where: str) -> CapacitySpec | None:
    """A replay with a budget (slo_p99_ms) searches the highest speed that keeps it, from its
    one `speed`, up to `max_speed`; None: a replay at its speeds."""
    if "slo_p99_ms" not in values:
        extra = [k for k in ("max_speed", "slo_per_kind", *_CAPACITY_KEYS) if k in values]
        if extra:
            raise UsageError(f"{where}: {extra[0]} is for a replay with slo_p99_ms (a search)")
        return None
    speeds = values.get("speed", [1.0])
    if len(speeds) > 1:
        raise UsageError(f"{where}: a replay with slo_p99_ms searches from one speed, not a list")
    given = {k: values[k] for k in _CAPACITY_KEYS if k in values}
    return CapacitySpec(
        **given,
        start_rate=speeds[0],
        max_rate=values.get("max_speed", 100.0),
        min_rate=0.01,
        per_kind=values.get("slo_per_kind", False),
    )


def _placement(values: dict[str, Any], where: str) -> str:
    placement: str = values.get("placement", "pinned")
    if "cpu_quota" in values and placement != "quota":
        raise UsageError(f'{where}: cpu_quota is for placement = "quota", not {placement!r}')
    return placement


def check_runtime_mode(load: Load, servers: list[str], where: str) -> None:
    """A load's runtime_mode must be one that each server it runs on has."""
    if load.runtime_mode is None:
        return
    for name in (s for s in servers if not load.servers or s in load.servers):
        modes = get(name).runtime_modes
        if load.runtime_mode not in modes:
            has = f"has {', '.join(repr(m) for m in modes)}" if modes else "has no runtime modes"
            raise UsageError(
                f"{where}: [[load]] {load.name!r}: runtime_mode {load.runtime_mode!r}: "
                f"server {name} {has}"
            )


def parse_request(
    raw: dict[str, Any], study: str, index: int, base: Path | None = None
) -> RequestKind:
    """One [[requests]] table, its keys and its `expect` checked against study/keys.py; `query`
    is appended to the path, `body_file` read (relative to `base`, the study's folder)."""
    where = f"{study} [[requests]] #{index + 1}"
    values = read_table(raw, REQUEST_KEYS, where)
    expect = values.pop("expect", None)
    if expect is not None:
        expect = read_table(expect, EXPECT_KEYS, where, "expect.")
        if "status" not in expect:
            raise UsageError(f"{where}: expect.status is required: an HTTP status code")
        if "body_float" in expect:
            read_table(expect["body_float"], BODY_FLOAT_KEYS, where, "expect.body_float.")
        values["expect"] = expect
    query = values.pop("query", None)
    if query:
        sep = "&" if "?" in values.get("path", "/") else "?"
        values["path"] = values.get("path", "/") + sep + urlencode(query)
    body_file = values.pop("body_file", None)
    if body_file is not None:
        if "body" in values:
            raise UsageError(f"{where}: body and body_file: give one")
        path = (base or Path.cwd()) / body_file
        try:
            values["body"] = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{where}: body_file {body_file!r}: cannot read: {exc}") from None
    return RequestKind(**values)
