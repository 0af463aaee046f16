"""Where a study's load comes from: the server's address and the load hosts a study names. How one
cell's plan is shared among them is the plan's own (`EnginePlan.split`, results/engine_plan.py)."""

from __future__ import annotations

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
