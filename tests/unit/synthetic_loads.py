"""Synthetic stores of several loads, each cell as a test describes it (status, req/s, p99, a
broadcast's fan-out), built with the Store API for unit tests of findings (no tests here)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from unit.synthetic import ENV, _cell, engine_result, repeat
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.store import Store


@dataclass
class Spec:
    """One cell: its status and reason, and the repeats' median req/s and p99 (µs)."""

    rps: float = 1000.0
    p99: float = 2000.0
    status: str = "measured"
    reason: str | None = None
    cpu: float = 95.0
    lost: int = 0  # a broadcast's deliveries lost per repeat
    extra: dict[str, Any] = field(default_factory=dict)


def _repeats(spec: Spec, model: str, level: float, n: int, rng: random.Random) -> list:
    out = []
    for i in range(n):
        shake = 1 + rng.uniform(-0.01, 0.01)
        rps, p99 = spec.rps * shake, spec.p99 * shake
        rep = repeat(i, rps, p99 / 3, p99, spec.cpu, model="closed", level=level)
        if model == "broadcast":
            doc = engine_result(rps, p99 / 3, p99, level=level)
            due = int(rps)
            doc["websocket"] = {
                "handshakes_ok": int(level) + 1,
                "broadcast": {
                    "subscribers": int(level),
                    "subscribers_open": int(level),
                    "publisher_open": True,
                    "published": int(due / level),
                    "due": due,
                    "delivered": due - spec.lost,
                    "lost": spec.lost,
                },
            }
            rep = replace(rep, engine=EngineResult.from_dict(doc))
        out.append(replace(rep, more={"start": i % 3}))
    return out


def build(
    path: Path,
    loads: list[dict[str, Any]],
    cells: dict[tuple[str, str, float], Spec],
    name: str = "roles",
    repeats: int = 3,
    seed: int = 1,
    config: dict[str, Any] | None = None,
) -> Path:
    """A finished study of `loads` (each a [[load]] table as run); `cells` maps (load, server,
    level) to what the cell came to; a cell's status other than measured keeps its repeats
    (invalid, contended) unless it is disqualified or unavailable."""
    rng = random.Random(seed)
    servers = sorted({server for _, server, _ in cells})
    store = Store(path)
    table = {"name": name, "repeats": repeats, "starts": 3, "load": loads, "servers": servers}
    study_id = store.begin_study(name, table | (config or {}) | {"command_line": []}, ENV)
    models = {load["name"]: load["model"] for load in loads}
    for position, ((load, server, level), spec) in enumerate(cells.items()):
        model = models[load]
        keep = spec.status not in ("disqualified", "unavailable")
        reps = _repeats(spec, model, level, repeats, rng) if keep else []
        cell = _cell(server, load, model, level, position, spec.status, spec.reason)
        store.save_cell(study_id, cell | spec.extra, reps)
    store.finish_study(study_id)
    store.close()
    return path
