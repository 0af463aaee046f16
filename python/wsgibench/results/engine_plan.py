"""The engine contract's plan side (docs/engine-protocol.md): the one module that knows its keys
(a request kind's `expect` aside: results/plan_expect.py, whose `Expect` it uses).

`PROTOCOL_VERSION`; the load models (`MODELS`: the plan field a level sets, the fields a load of
the model may set and those it must, how it is split among load hosts; `LEVEL_FIELDS`); and
`EnginePlan`, a plan typed and frozen, built with keyword arguments only. It writes exactly the JSON
the engine reads (`to_dict`, `to_json`), reads a stored one back (`from_dict`), is split among load
hosts (`split`), and says what it implies: how long the engine may take (`bound_s`), how many
requests it sends when that is known (`expected_requests`), how many are in flight per connection
(`depth`).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from wsgibench.results import json_fields as jf
from wsgibench.results.host_share import host_seed, share
from wsgibench.results.plan_request import PlanRequest

PROTOCOL_VERSION = 1


class MalformedPlan(jf.FieldError):
    """Not a plan of this protocol, or a model given fields it does not take or lacking some."""


class ModelFields(NamedTuple):
    """A load model's plan fields: the one a level sets, those a load may set, those it must; and
    how it is split among load hosts: the integer attributes divided (the first one present
    decides how many hosts have anything to do), whether its level is a rate, divided evenly, and
    whether it runs whole on one host (a broadcast's due and receipt times share one clock)."""

    level: str
    allowed: frozenset[str]
    required: frozenset[str]
    divided: tuple[str, ...] = ()
    rate_level: bool = False
    one_host: bool = False
    # Each host takes every n-th request of a schedule (trace): `first` its index, `stride` n.
    interleaved: bool = False


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_RATE = ModelFields(
    "rate",
    _words("duration_s connections_total arrival calls pipeline pool"),
    frozenset(),
    ("connections_total", "pool"),
    True,
)
_BROADCAST = _words("duration_s publish_rate")
MODELS: dict[str, ModelFields] = {
    "closed": ModelFields(
        "connections", _words("duration_s pipeline"), _words("duration_s"), ("level",)
    ),
    "rate": _RATE,
    "sessions": ModelFields(
        "users_per_s",
        _words("duration_s requests think_s arrival"),
        _words("duration_s requests think_s"),
        rate_level=True,
    ),
    "count": ModelFields(
        "concurrency", _words("requests"), _words("requests"), ("level", "requests")
    ),
    "conn_rate": _RATE,
    "broadcast": ModelFields("subscribers", _BROADCAST, _BROADCAST, one_host=True),
    "trace": ModelFields(
        "speed",
        _words("schedule schedule_requests span_s duration_s pool first stride"),
        _words("schedule schedule_requests span_s"),
        ("pool",),
        interleaved=True,
    ),
}
# What a stored cell's `level` counts, by load model (the engine plan field the level sets).
LEVEL_FIELDS: dict[str, str] = {kind: fields.level for kind, fields in MODELS.items()}

_PLAN_KEYS = _words(
    "protocol_version target allow_remote model http requests timeout_s connect_timeout_s"
    " threads cpus seed phase_s engine_io websocket http2 tls"
)


# A model's fields besides its kind and its level, in the order a plan writes them, and how each
# is read back.
_MODEL_FIELDS: dict[str, Callable[[Mapping[str, Any], str], Any]] = {
    "duration_s": jf.number,
    "connections_total": jf.integer,
    "calls": jf.integer,
    "pool": jf.integer,
    "pipeline": jf.flag_or_int,
    "arrival": jf.text,
    "requests": jf.integer,
    "think_s": jf.number,
    "publish_rate": jf.number,
    "schedule": jf.text,
    "schedule_requests": jf.integer,
    "span_s": jf.number,
    "first": jf.integer,
    "stride": jf.integer,
}


@dataclass(frozen=True, kw_only=True)
class LoadModel:
    """A load model and its settings (docs/engine-protocol.md, "Models"); `level` is the value of
    the model's level field (`LEVEL_FIELDS`). Numbers keep the type they were given."""

    kind: str
    level: float
    duration_s: float | None = None
    connections_total: int | None = None
    calls: int | None = None
    pipeline: bool | int | None = None  # rate loads: a flag, or a number (> 1 pipelines)
    arrival: str | None = None
    pool: int | None = None  # rate: a fixed pool of keep-alive connections, one request each
    requests: int | None = None
    think_s: float | None = None
    publish_rate: float | None = None  # broadcast: messages a second from the one publisher
    # trace: the schedule file, its requests, the log's span (s at speed 1; `duration_s` replays
    # only its start), and a load host's share of it (every `stride`-th request from `first`);
    # its warm-up is a rate load of the log's mix at its mean rate (`shortened`)
    schedule: str | None = None
    schedule_requests: int | None = None
    span_s: float | None = None
    first: int | None = None
    stride: int | None = None

    def __post_init__(self) -> None:
        fields = MODELS.get(self.kind)
        if fields is None:
            raise MalformedPlan(f"model {self.kind!r} is not one of {', '.join(MODELS)}")
        given = {name for name in _MODEL_FIELDS if getattr(self, name) is not None}
        if given - fields.allowed:
            extra = ", ".join(sorted(given - fields.allowed))
            raise MalformedPlan(f"model {self.kind} takes no {extra}")
        if fields.required - given:
            missing = ", ".join(sorted(fields.required - given))
            raise MalformedPlan(f"model {self.kind} needs {missing}")

    @property
    def level_field(self) -> str:
        return MODELS[self.kind].level

    def to_dict(self) -> dict[str, Any]:
        model: dict[str, Any] = {"kind": self.kind}
        model.update((n, getattr(self, n)) for n in _MODEL_FIELDS if getattr(self, n) is not None)
        model[self.level_field] = self.level
        return model

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LoadModel:
        kind = jf.need(jf.text(d, "kind"), "model.kind")
        level = MODELS[kind].level if kind in MODELS else "level"
        jf.only(d, frozenset({"kind", level, *_MODEL_FIELDS}), f"model {kind}")
        return cls(
            kind=kind,
            level=jf.need(jf.number(d, level), f"model.{level}"),
            **{name: read(d, name) for name, read in _MODEL_FIELDS.items()},
        )

    def threads_for(self, wanted: int) -> int:
        """The engine threads the model can use of `wanted`: a pool gives each its own
        connections, so at most one a connection."""
        return max(1, min(wanted, self.pool)) if self.pool else wanted

    def shortened(self, seconds: float) -> LoadModel:
        """The model of a warm-up: `seconds` long, or a few requests of a count load."""
        if self.kind == "count":
            return replace(self, requests=max(1, min(self.requests or 1, int(self.level) * 2)))
        if self.kind == "sessions":
            return replace(self, duration_s=seconds, requests=min(2, self.requests or 2), think_s=0)
        if self.kind == "trace":  # the log's mix at its mean rate at the speed, for `seconds`
            rate = (self.schedule_requests or 1) / (self.span_s or 1) * float(self.level)
            return LoadModel(kind="rate", level=rate, duration_s=seconds, pool=self.pool)
        return replace(self, connections_total=None, duration_s=seconds)

    def active_hosts(self, hosts: int) -> int:
        """How many of `hosts` get a non-empty share (a closed loop of 2 connections uses 2)."""
        if MODELS[self.kind].one_host:
            return 1
        divided = MODELS[self.kind].divided
        counts = [int(getattr(self, a)) for a in divided if getattr(self, a) is not None]
        if MODELS[self.kind].interleaved:
            counts.append(self.schedule_requests or 0)
        return max(1, min([hosts, *counts]))

    def part(self, index: int, hosts: int) -> LoadModel:
        """Host `index`'s part of the load among `hosts` (all with something to do)."""
        fields = MODELS[self.kind]
        parts: dict[str, Any] = {
            a: share(int(getattr(self, a)), index, hosts)
            for a in fields.divided
            if getattr(self, a) is not None
        }
        if fields.interleaved:
            parts.update(first=index, stride=hosts)
        if fields.rate_level:
            rate = float(self.level)
            # (i+1)/n - i/n of the rate: the shares telescope to the whole rate
            parts["level"] = rate * (index + 1) / hosts - rate * index / hosts
        return replace(self, **parts)


@dataclass(frozen=True, kw_only=True)
class Target:
    host: str
    port: int

    @property
    def remote(self) -> bool:
        """Off loopback: the engine goes there only when the plan allows a remote target."""
        try:
            return not ipaddress.ip_address(self.host).is_loopback
        except ValueError:  # a name, not an address
            return True


@dataclass(frozen=True, kw_only=True)
class HttpSettings:
    version: str = "1.1"
    keep_alive: bool = True


@dataclass(frozen=True, kw_only=True)
class EnginePlan:
    """One run of the engine: where, which load, how, with what requests, on which CPUs;
    `phase_s` only in a load host's share (so the open models' schedules interleave)."""

    target: Target
    model: LoadModel
    http: HttpSettings
    requests: tuple[PlanRequest, ...]
    timeout_s: float
    connect_timeout_s: float
    threads: int = 1
    cpus: tuple[int, ...] = ()
    seed: int = 1
    phase_s: float | None = None
    engine_io: str = "auto"  # the engine's I/O backend: auto, epoll or io_uring
    # WebSocket echo: each request a message of this many bytes on an upgraded connection.
    websocket_message_bytes: int | None = None
    # HTTP/2 over cleartext (h2c, prior knowledge): this many concurrent streams per connection.
    http2_streams: int | None = None
    # TLS 1.3: the PEM text of the CA the server's certificate must chain to (the harness's
    # test CA, run/tls.py); None: plain TCP.
    tls_ca_pem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The plan exactly as the engine reads it (docs/engine-protocol.md)."""
        plan: dict[str, Any] = {
            "protocol_version": PROTOCOL_VERSION,
            "target": {"host": self.target.host, "port": self.target.port},
            **({"allow_remote": True} if self.target.remote else {}),
            "model": self.model.to_dict(),
            "http": {"version": self.http.version, "keep_alive": self.http.keep_alive},
            "requests": [r.to_dict() for r in self.requests],
            "timeout_s": self.timeout_s,
            "connect_timeout_s": self.connect_timeout_s,
            "threads": self.threads,
            "cpus": list(self.cpus),
            "seed": self.seed,
        }
        if self.phase_s is not None:
            plan["phase_s"] = self.phase_s
        if self.engine_io != "auto":
            plan["engine_io"] = self.engine_io
        if self.websocket_message_bytes is not None:
            plan["websocket"] = {"message_bytes": self.websocket_message_bytes}
        if self.http2_streams is not None:
            plan["http2"] = {"streams": self.http2_streams}
        if self.tls_ca_pem is not None:
            plan["tls"] = {"ca_pem": self.tls_ca_pem}
        return plan

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EnginePlan:
        """A plan read back (a stored result's echo); MalformedPlan says what is wrong. Fields the
        engine has a default for may be absent: they take that default."""
        try:
            return cls._read(d)
        except jf.FieldError as exc:
            raise MalformedPlan(f"engine plan: {exc}") from None

    @classmethod
    def _read(cls, d: Mapping[str, Any]) -> EnginePlan:
        if not isinstance(d, Mapping):
            raise MalformedPlan("not a JSON object")
        jf.only(d, _PLAN_KEYS, "the plan")
        if d.get("protocol_version", PROTOCOL_VERSION) != PROTOCOL_VERSION:
            raise MalformedPlan(f"protocol_version {d['protocol_version']!r} is not 1")
        target, http = jf.table(d, "target"), jf.table(d, "http")
        version = jf.or_default(jf.text(http, "version"), "1.1")
        timeout = jf.or_default(jf.number(d, "timeout_s"), 5.0)
        return cls(
            target=Target(
                host=jf.or_default(jf.text(target, "host"), "127.0.0.1"),
                port=jf.need(jf.integer(target, "port"), "target.port"),
            ),
            model=LoadModel.from_dict(jf.table(d, "model")),
            http=HttpSettings(
                version=version,
                keep_alive=jf.or_default(jf.flag(http, "keep_alive"), version == "1.1"),
            ),
            requests=tuple(PlanRequest.from_dict(r) for r in jf.items(d, "requests", jf.table)),
            timeout_s=timeout,
            connect_timeout_s=jf.or_default(jf.number(d, "connect_timeout_s"), timeout),
            threads=jf.or_default(jf.integer(d, "threads"), 1),
            cpus=jf.items(d, "cpus", jf.integer),
            seed=jf.or_default(jf.integer(d, "seed"), 1),
            phase_s=jf.number(d, "phase_s"),
            engine_io=jf.or_default(jf.text(d, "engine_io"), "auto"),
            websocket_message_bytes=(
                None
                if d.get("websocket") is None
                else jf.or_default(jf.integer(jf.table(d, "websocket"), "message_bytes"), 64)
            ),
            http2_streams=(
                None
                if d.get("http2") is None
                else jf.or_default(jf.integer(jf.table(d, "http2"), "streams"), 1)
            ),
            tls_ca_pem=None if d.get("tls") is None else jf.text(jf.table(d, "tls"), "ca_pem"),
        )

    @property
    def bound_s(self) -> float:
        """How long the engine may take before it is considered hung."""
        m = self.model
        base = float(m.duration_s or 0)
        if m.kind == "trace":
            base = min(base or float("inf"), float(m.span_s or 0)) / float(m.level)
        if m.kind == "sessions":
            base += (m.requests or 1) * ((m.think_s or 0) + self.timeout_s)
        if m.kind == "count" or m.connections_total is not None:
            base = max(base, 600.0)
        base += self.connect_timeout_s + self.timeout_s if m.kind == "broadcast" else 0
        return base + 2 * self.timeout_s + 30.0

    @property
    def expected_requests(self) -> int | None:
        """The requests the plan sends in all, when its model fixes it (None: the run decides)."""
        m = self.model
        if m.kind == "sessions":
            return round(m.level * (m.duration_s or 0)) * (m.requests or 0)
        if m.kind == "count":
            return m.requests
        if m.kind == "trace":  # the whole schedule; a host's share, or its start, unknown here
            whole = m.duration_s is None and (m.stride or 1) == 1
            return m.schedule_requests if whole else None
        if m.connections_total is not None:
            return m.connections_total * (m.calls or 1)
        return None

    @property
    def depth(self) -> int:
        """Requests in flight per connection (pipelining, or HTTP/2 streams: at most that many);
        a rate load's `true` pipelines two."""
        if self.http2_streams is not None:
            return self.http2_streams
        if self.model.pipeline is True:
            return 2
        return max(1, int(self.model.pipeline or 1))

    def split(self, hosts: int) -> list[EnginePlan]:
        """The plan of each of `hosts` load hosts that has something to do, in host order: every
        connection, request and session goes to exactly one host, rates are divided so that the
        shares add up to the rate, uniform schedules are phased so they interleave, and each host's
        seed comes from the plan's seed and the host's index."""
        if hosts < 1:
            raise ValueError("at least one load host")
        n = self.model.active_hosts(hosts)
        rate = float(self.model.level) if MODELS[self.model.kind].rate_level else None
        return [
            replace(
                self,
                model=self.model.part(i, n),
                seed=host_seed(self.seed, i),
                phase_s=min(i / rate, 0.999) if rate and i else self.phase_s,
            )
            for i in range(n)
        ]
