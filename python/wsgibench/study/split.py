"""How one cell's engine plan is shared among load hosts, deterministically: every connection,
request and session goes to exactly one host, rates are divided so that the shares add up to the
rate, uniform schedules are phased so they interleave, and each host's seed comes from the cell's
seed and the host's index."""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from typing import Any

from wsgibench.errors import UsageError


@dataclass(frozen=True)
class LoadHostsSpec:
    """Where a study's load comes from: a Dask scheduler's address, or N local Dask workers."""

    cluster: str | None = None
    local_workers: int | None = None
    skew_bound_s: float = 0.010

    def as_dict(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "local_workers": self.local_workers,
            "skew_bound_s": self.skew_bound_s,
        }


def parse_hosts(values: dict[str, Any], where: str) -> tuple[str, LoadHostsSpec | None]:
    """The server's address and the load hosts a study names (`server_host`, `cluster` or
    `load_hosts`, `start_skew_bound_ms`), their types already checked (study/keys.py)."""
    host = values.get("server_host", "127.0.0.1")
    cluster, count = values.get("cluster"), values.get("load_hosts")
    if cluster is not None and count is not None:
        raise UsageError(f"{where}: give cluster (a Dask scheduler) or load_hosts, not both")
    if cluster is None and count is None:
        return host, None
    bound = values.get("start_skew_bound_ms", 10)
    return host, LoadHostsSpec(cluster, count, float(bound) / 1000)


# model kind -> the integer fields divided among hosts (the first one decides how many hosts
# have anything to do) and the rate fields divided evenly
_INTEGER: dict[str, tuple[str, ...]] = {
    "closed": ("connections",),
    "count": ("concurrency", "requests"),
    "rate": ("connections_total",),
    "conn_rate": ("connections_total",),
    "sessions": (),
}
_RATE: dict[str, str] = {"rate": "rate", "conn_rate": "rate", "sessions": "users_per_s"}


def share(total: int, index: int, hosts: int) -> int:
    """Host `index`'s part of `total` items: the remainder goes to the first hosts."""
    return total // hosts + (1 if index < total % hosts else 0)


def host_seed(seed: int, index: int) -> int:
    """A seed of its own for each host, the same every time for the same cell and index."""
    digest = hashlib.sha256(f"wsgibench-load-host:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:7], "big")


def active_hosts(model: dict[str, Any], hosts: int) -> int:
    """How many of `hosts` get a non-empty share (a closed loop of 2 connections uses 2)."""
    fields = _INTEGER.get(model["kind"])
    if fields is None:
        raise ValueError(f"cannot split a {model['kind']!r} load over hosts")
    counts = [int(model[f]) for f in fields if model.get(f) is not None]
    return max(1, min([hosts, *counts]))


def split_plan(plan: dict[str, Any], hosts: int) -> list[dict[str, Any]]:
    """The plan of each load host that has something to do, in host order."""
    if hosts < 1:
        raise ValueError("at least one load host")
    model = plan["model"]
    n = active_hosts(model, hosts)
    parts = []
    for i in range(n):
        part = copy.deepcopy(plan)
        m = part["model"]
        for f in _INTEGER[model["kind"]]:
            if model.get(f) is not None:
                m[f] = share(int(model[f]), i, n)
        rate_field = _RATE.get(model["kind"])
        if rate_field:
            rate = float(model[rate_field])
            # (i+1)/n - i/n of the rate: the shares telescope to the whole rate
            m[rate_field] = rate * (i + 1) / n - rate * i / n
            if i:
                part["phase_s"] = min(i / rate, 0.999)
        part["seed"] = host_seed(int(plan.get("seed", 1)), i)
        parts.append(part)
    return parts
