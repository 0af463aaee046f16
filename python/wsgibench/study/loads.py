"""Load definitions of a study and how each level becomes an engine plan (protocol_version 1)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from wsgibench.errors import UsageError
from wsgibench.results.summary import LEVEL_FIELDS

PROTOCOL_VERSION = 1

# model -> (the plan field a level sets, the fields a load may set, required ones)
MODELS: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {
    "closed": (
        LEVEL_FIELDS["closed"],
        frozenset({"duration_s", "pipeline"}),
        frozenset({"duration_s"}),
    ),
    "rate": (
        LEVEL_FIELDS["rate"],
        frozenset({"duration_s", "connections_total", "arrival", "calls", "pipeline"}),
        frozenset(),
    ),
    "sessions": (
        LEVEL_FIELDS["sessions"],
        frozenset({"duration_s", "requests", "think_s", "arrival"}),
        frozenset({"duration_s", "requests", "think_s"}),
    ),
    "count": (LEVEL_FIELDS["count"], frozenset({"requests"}), frozenset({"requests"})),
}
MODELS["conn_rate"] = MODELS["rate"]
DATABASES = ("sqlite", "postgresql", "mariadb")  # what a [[load]]'s `database` may name


@dataclass(frozen=True)
class RequestKind:
    name: str = "pong"
    method: str = "GET"
    path: str = "/"
    weight: float = 1.0
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    expect: dict[str, Any] = field(default_factory=lambda: {"status": 200, "body": "Pong!"})

    def plan(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "weight": self.weight,
            "expect": self.expect,
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

    @property
    def level_field(self) -> str:
        return MODELS[self.model][0]

    @property
    def wants_keep_alive(self) -> bool:
        if self.model in ("rate", "conn_rate"):
            return self.keep_alive and int(self.params.get("calls", 1)) > 1
        return self.keep_alive

    def plan(
        self,
        level: float,
        port: int,
        requests: list[RequestKind],
        cpus: list[int] | None,
        seed: int,
        warmup: bool = False,
        threads: int = 1,
        host: str = "127.0.0.1",
    ) -> dict[str, Any]:
        """The engine plan of one level; a target off loopback is one the study named."""
        model = {"kind": self.model, **self.params, self.level_field: _num(level)}
        if warmup:
            model = _shortened(model, self.warmup_s)
        remote = not ipaddress.ip_address(host).is_loopback
        return {
            "protocol_version": PROTOCOL_VERSION,
            "target": {"host": host, "port": port},
            **({"allow_remote": True} if remote else {}),
            "model": model,
            "http": {"version": self.http, "keep_alive": self.keep_alive},
            "requests": [r.plan() for r in requests],
            "timeout_s": self.timeout_s,
            "connect_timeout_s": self.timeout_s,
            "threads": threads,
            "cpus": cpus or [],
            "seed": seed,
        }

    def nominal_seconds(self) -> float:
        """A rough per-repeat duration, for progress and time budgets."""
        return float(self.params.get("duration_s", 10.0))


def _num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _shortened(model: dict[str, Any], seconds: float) -> dict[str, Any]:
    short = dict(model)
    if short["kind"] == "count":
        short["requests"] = max(1, min(short["requests"], int(short.get("concurrency", 1)) * 2))
    elif short["kind"] == "sessions":
        short.update(duration_s=seconds, requests=min(2, short["requests"]), think_s=0)
    else:
        short.pop("connections_total", None)
        short["duration_s"] = seconds
    return short


def parse_load(raw: dict[str, Any], where: str) -> Load:
    raw = dict(raw)
    name = raw.pop("name", None) or raw.get("model", "load")
    model = raw.pop("model", None)
    if model not in MODELS:
        raise UsageError(
            f"{where}: model must be one of {', '.join(sorted(MODELS))}, not {model!r}"
        )
    levels = raw.pop("levels", None)
    if (
        not isinstance(levels, list)
        or not levels
        or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in levels
        )
    ):
        raise UsageError(
            f"{where}: levels must be a non-empty list of positive numbers, not {levels!r}"
        )
    http = str(raw.pop("http", "1.1"))
    if http not in ("1.0", "1.1"):
        raise UsageError(f'{where}: http must be "1.0" or "1.1"')
    keep_alive = raw.pop("keep_alive", http == "1.1")
    timeout_s = float(raw.pop("timeout_s", 5.0))
    warmup_s = float(raw.pop("warmup_s", 1.0))
    database = raw.pop("database", None)
    if database is not None and database not in DATABASES:
        raise UsageError(
            f"{where}: database must be one of {', '.join(DATABASES)}, not {database!r}"
        )
    cpus = raw.pop("cpus", None)
    if cpus is not None and (not isinstance(cpus, int) or isinstance(cpus, bool) or cpus < 1):
        raise UsageError(f"{where}: cpus must be a positive integer")
    _, allowed, required = MODELS[model]
    unknown = set(raw) - allowed
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} for model {model}")
    missing = required - set(raw)
    if missing:
        raise UsageError(f"{where}: model {model} needs {', '.join(sorted(missing))}")
    if model in ("rate", "conn_rate") and not ({"duration_s", "connections_total"} & set(raw)):
        raise UsageError(f"{where}: model {model} needs duration_s or connections_total")
    for key, value in raw.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            raise UsageError(f"{where}: {key} must not be negative")
    if timeout_s <= 0 or warmup_s < 0:
        raise UsageError(f"{where}: timeout_s must be positive and warmup_s not negative")
    return Load(
        name, model, tuple(levels), raw, http, bool(keep_alive), timeout_s, warmup_s, database, cpus
    )
