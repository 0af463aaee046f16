"""Every plan the fixture tests/unit/results/engine_plans.json records: each built-in study (and its
[full] size) and a study of every model's less common keys, each load at each level, measured and
warmed up, on loopback and on a remote host; the fixture holds each plan's JSON and its three-host
split as the plan-building code of before the typed EnginePlan made them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wsgibench.study.full import apply_full
from wsgibench.study.loads import Load
from wsgibench.study.model import (
    Study,
    builtin_names,
    parse_study,
    read_raw,
    shown_path,
    study_path,
)
from wsgibench.study.plan import STAND_IN_CA

FIXTURE = Path(__file__).with_name("engine_plans.json")
HOSTS = ("127.0.0.1", "10.0.0.2")

# The keys no built-in study sets: pipelining, HTTP/1.0 keep-alive, headers, bodies, weights.
ODD_KEYS: dict[str, Any] = {
    "name": "odd-keys",
    "seed": 5,
    "servers": ["wsgiref"],
    "requests": [
        {"name": "small", "path": "/?n=1", "weight": 3.0, "headers": {"X-A": "1"}},
        {
            "name": "post",
            "method": "POST",
            "path": "/post",
            "body": "a=1",
            "weight": 1.5,
            "expect": {"status": 201, "body_float": {"min": 0.0, "max": 2.5}},
        },
    ],
    "load": [
        {"name": "piped", "model": "closed", "levels": [4, 16], "duration_s": 3, "pipeline": 4},
        {
            "name": "one-oh",
            "model": "closed",
            "levels": [2],
            "duration_s": 2.5,
            "http": "1.0",
            "keep_alive": True,
            "timeout_s": 2,
            "warmup_s": 0.5,
        },
        {
            "name": "rate-piped",
            "model": "rate",
            "levels": [7, 250.5],
            "duration_s": 4,
            "calls": 5,
            "pipeline": 2,
            "arrival": "poisson",
        },
        {"name": "conns", "model": "conn_rate", "levels": [100], "connections_total": 1000},
        {
            "name": "users",
            "model": "sessions",
            "levels": [3],
            "duration_s": 10,
            "requests": 4,
            "think_s": 0.5,
            "arrival": "poisson",
            "warmup_s": 0,
        },
        {"name": "ab", "model": "count", "levels": [1, 3], "requests": 10},
    ],
}


def studies() -> Iterator[tuple[str, Study]]:
    """Each built-in study at its own size, and at its seed's full size when it has one."""
    for name in builtin_names():
        path = study_path(name)
        raw = read_raw(path)
        yield name, parse_study(raw, shown_path(path))
        if isinstance(raw.get("full"), dict):
            yield f"{name}+full", parse_study(apply_full(raw, name), shown_path(path))
    yield "odd-keys", parse_study(ODD_KEYS, "odd-keys")


def cases() -> Iterator[tuple[str, Load, dict[str, Any]]]:
    """(the fixture's key, the load, the keyword arguments of its `plan`) for every plan."""
    for name, study in studies():
        for load in study.loads:
            for level in load.levels:
                for warmup in (False, True):
                    for host in HOSTS:
                        remote = host != "127.0.0.1"
                        what = "warmup" if warmup else "measure"
                        kwargs = {
                            "level": level,
                            "port": 8080,
                            "requests": list(study.requests),
                            "cpus": [2, 3] if remote else None,
                            "seed": study.seed * 1000 + 7,
                            "warmup": warmup,
                            "threads": 2 if remote else 1,
                            "host": host,
                            # A TLS load carries its CA (a stand-in here: the plan only holds it).
                            "tls_ca_pem": STAND_IN_CA if load.tls else None,
                        }
                        yield f"{name}|{load.name}|{level!r}|{what}|{host}", load, kwargs
