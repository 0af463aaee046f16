"""Per-cell summaries read from a store: what show, export and reports present."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Any

from wsgibench.errors import UsageError
from wsgibench.results.repeat import cores_used, per_cpu_s
from wsgibench.results.stats import Summary, summarise
from wsgibench.results.store import Cell, Store
from wsgibench.results.wrong_replies import WrongReply, first_of_cell, stored

METRICS = (
    "rps_ok",
    "latency_p50_us",
    "latency_p99_us",
    "error_rate",
    "cpu_mean_pct",
    "rss_peak_bytes",
)


@dataclass
class CellSummary:
    cell: Cell
    repeat_ids: list[int]
    stats: dict[str, Summary | None]
    saturated: bool
    flavour: str
    version: str | None
    # Loads with several request kinds: each kind's median p50 and p99 (µs) over the repeats.
    kinds: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    interface: str = ""  # "WSGI", "ASGI", "native (RSGI)": how the server called the app
    # Latency metrics whose summary is a lower bound: it falls on requests that failed (recorded
    # at the time they failed) in a repeat that decides it.
    bounds: frozenset[str] = frozenset()
    # The repeats' latency covers complete replies only (an engine result of format 1).
    replies_only: bool = False
    # Of each kind and error class, the first repeat's first wrong reply, quoted.
    wrong_replies: tuple[WrongReply, ...] = ()

    def bound(self, metric: str) -> bool:
        return metric in self.bounds

    @property
    def interface_short(self) -> str:
        """WSGI, ASGI or native: the column `show` prints."""
        return self.interface.split(" ")[0] or "-"

    @property
    def noisy(self) -> bool:
        s = self.stats.get("rps_ok")
        return bool(s and s.noisy)

    def value(self, metric: str, how: str = "median") -> float | None:
        s = self.stats.get(metric)
        return getattr(s, how) if s else None

    def flat(self) -> dict[str, Any]:
        """One row for CSV/JSON export."""
        c = self.cell
        row: dict[str, Any] = {
            "cell_id": c.id,
            "study_id": c.study_id,
            "server": c.server,
            "flavour": self.flavour,
            "interface": self.interface,
            "version": self.version,
            "load": c.load,
            "model": c.model,
            "level": c.level,
            "status": c.status,
            "reason": c.reason or "",
            "notes": " | ".join(c.notes),
            "repeats": len(self.repeat_ids),
            "repeat_ids": " ".join(map(str, self.repeat_ids)),
            "saturated": self.saturated,
            # what was wrong, one reply per kind and class ("pong: bad_status: status 500, ...")
            "wrong_replies": " | ".join(w.summary() for w in self.wrong_replies),
        }
        for key in ("pong", "http10", "keep_alive", "pipelining"):
            row[f"cap_{key}"] = (c.capabilities or {}).get(key)
        for metric, s in self.stats.items():
            for how in ("median", "trimmed_mean", "min", "max", "cv"):
                row[f"{metric}_{how}"] = getattr(s, how) if s else None
        return row


def summarise_study(store: Store, study_id: int, trim: int = 0) -> list[CellSummary]:
    out = []
    for cell in store.cells(study_id):
        reps = store.repeats(cell.id)
        extras = [json.loads(r["extra_json"] or "{}") for r in reps]  # read once for both below
        stats = {m: summarise([r[m] for r in reps if r[m] is not None], trim) for m in METRICS}
        stats.update(_cpu_figures(reps, extras, trim))
        stats.update(_reply_figures(extras, trim))
        info = cell.server_info or {}
        looks = [extra.get("latency") for extra in extras]
        out.append(
            CellSummary(
                cell,
                [r["id"] for r in reps],
                stats,
                any(r["saturated"] for r in reps),
                info.get("flavour", ""),
                info.get("version"),
                _kinds(extras),
                info.get("interface") or _interface_of(cell.server),
                latency_bounds(reps, extras, stats),
                bool(reps) and any(not (look or {}).get("covers_failures") for look in looks),
                tuple(first_of_cell(stored(extra) for extra in extras)),
            )
        )
    return out


LATENCY_METRICS = {"latency_p50_us": "p50", "latency_p99_us": "p99"}


def latency_bounds(
    reps: list[Any], extras: list[dict[str, Any]], stats: dict[str, Summary | None]
) -> frozenset[str]:
    """The latency metrics whose summary is only a lower bound. Each repeat's figure is at most
    its true value, exactly so when it is no bound; the median (or trimmed mean) over repeats is
    exact only when every repeat at or below it is exact, as a bound above it cannot move it (a
    trimmed mean reads every kept repeat: any bound makes it one, said conservatively)."""
    found = set()
    for metric, name in LATENCY_METRICS.items():
        summary = stats.get(metric)
        if summary is None:
            continue
        cut = float("inf") if summary.trim else summary.median
        for r, extra in zip(reps, extras, strict=True):
            marked = name in ((extra.get("latency") or {}).get("bounds") or ())
            if marked and r[metric] is not None and r[metric] <= cut:
                found.add(metric)
    return frozenset(found)


def _cpu_figures(
    reps: list[Any], extras: list[dict[str, Any]], trim: int
) -> dict[str, Summary | None]:
    """Cores used and valid replies per server CPU-second, per repeat, summarised like METRICS."""
    cores, per_cpu = [], []
    for r, extra in zip(reps, extras, strict=True):
        used = cores_used(extra, r["cpu_mean_pct"])
        if used is not None:
            cores.append(used)
        if (value := per_cpu_s(r["rps_ok"], used)) is not None:
            per_cpu.append(value)
    return {"cores_used": summarise(cores, trim), "per_cpu_s": summarise(per_cpu, trim)}


def _reply_figures(extras: list[dict[str, Any]], trim: int) -> dict[str, Summary | None]:
    """The complete replies' own p50 and p99 per repeat (failures left out), summarised: beside
    the headline latency of every request."""
    found: dict[str, Summary | None] = {}
    for name in ("p50", "p99"):
        values = [
            float(v)
            for extra in extras
            if (v := ((extra.get("latency") or {}).get("replies") or {}).get(f"{name}_us"))
            is not None
        ]
        found[f"reply_latency_{name}_us"] = summarise(values, trim)
    return found


def _interface_of(server: str) -> str:
    """A store written before cells recorded the interface: the catalog's, if it knows the name."""
    from wsgibench.servers import get

    try:
        return get(server).interface_label
    except UsageError:
        return ""


def _kinds(extras: list[dict[str, Any]]) -> dict[str, tuple[float | None, float | None]]:
    """Each kind's median over the repeats of its p50 and p99 (from the repeats' extra record)."""
    per: dict[str, tuple[list[float], list[float]]] = {}
    for extra in extras:
        for name, k in (extra.get("kinds") or {}).items():
            p50s, p99s = per.setdefault(name, ([], []))
            if k.get("p50_us") is not None:
                p50s.append(k["p50_us"])
            if k.get("p99_us") is not None:
                p99s.append(k["p99_us"])
    return {
        name: (statistics.median(p50s) if p50s else None, statistics.median(p99s) if p99s else None)
        for name, (p50s, p99s) in per.items()
    }


def layout_text(env: dict[str, Any]) -> str:
    """The study's CPU layout and the machine's topology, from the stored environment."""
    lay = env.get("layout") or {}
    topo = env.get("topology") or {}
    text = (
        f"server CPUs {env.get('server_cpus', '?')}, engine CPUs {env.get('engine_cpus', '?')}"
        + (f" ({lay['policy']})" if lay.get("policy") else "")
    )
    if topo:
        nodes = len(topo.get("nodes") or [])
        text += (
            f"; topology: {len(topo.get('cpus') or [])} CPUs in {len(topo.get('cores') or [])}"
            f" cores, {'SMT' if topo.get('smt') else 'no SMT'}, {nodes} NUMA node"
            + ("s" if nodes != 1 else "")
        )
    return text + (f"; {lay['note']}" if lay.get("note") else "")


def load_hosts_text(env: dict[str, Any]) -> str:
    """Where the load came from when it came from several hosts ("" for the local engine)."""
    spec = env.get("load_hosts") or {}
    hosts = spec.get("hosts") or []
    if not hosts:
        return ""
    source = spec.get("cluster") or f"a local Dask cluster of {spec.get('local_workers')} workers"
    names = ", ".join(f"{h['address']} ({h.get('hostname', '?')})" for h in hosts)
    offsets = max(abs(float(h.get("clock_offset_s") or 0)) for h in hosts)
    bound = 1e3 * float(spec.get("skew_bound_s") or 0.010)
    return (
        f"{len(hosts)} load host(s) from {source}: {names}; largest clock offset "
        f"{1e3 * offsets:.2f} ms; a cell whose hosts start more than {bound:g} ms apart is invalid"
    )


def placement_text(isolation: dict[str, Any] | None) -> str:
    """A cell's workers and engine threads when either is more than one ("" otherwise)."""
    lay = (isolation or {}).get("layout") or {}
    workers, threads = lay.get("workers", 1), lay.get("engine_threads", 1)
    if workers == 1 and threads == 1:
        return ""
    return f"{workers} worker(s): {lay.get('workers_rule', '')}; engine {threads} thread(s)"
