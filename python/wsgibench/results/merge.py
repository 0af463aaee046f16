"""One engine result from the results of several load hosts, by exact merge: histograms added
(HdrHistogram addition, never percentiles averaged), counters summed, timelines summed second by
second from the common start. What cannot be merged exactly is not made up: a merged second has
no percentiles, and the hosts' own documents are kept beside the merge."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

from wsgibench.results.engine_plan import EnginePlan
from wsgibench.results.hdr_docs import merge_histograms
from wsgibench.results.protocol_merge import merge_protocols
from wsgibench.results.wrong_replies import first_of_each

HISTOGRAMS = ("latency_us", "service_us", "connect_us")
_SUMMED_TOTALS = (
    "requests_sent",
    "responses",
    "ok",
    "idle_close",
    "unannounced_closes",
    "resent",
    "connections_opened",
    "connection_close_replies",
    "bytes_received",
    "unsolicited_bytes",
    "abandoned",
    "queue_timeouts",
    "peak_open_connections",  # each host's own peak: the sum is what all hosts could hold at most
    "ok_in_window",
    "completed_after_window",
)


def add_counts(into: dict[str, int], more: Mapping[str, Any] | None) -> dict[str, int]:
    for key, value in (more or {}).items():
        into[str(key)] = into.get(str(key), 0) + int(value or 0)
    return into


def _merge_kinds(docs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    names: list[str] = []
    for d in docs:
        names += [k["name"] for k in d.get("kinds") or () if k["name"] not in names]
    kinds = []
    for name in names:
        parts = [k for d in docs for k in d.get("kinds") or () if k["name"] == name]
        kind: dict[str, Any] = {"name": name, "errors": {}, "bad_status_codes": {}}
        for field in ("requests_sent", "responses", "ok", "resent"):
            kind[field] = sum(int(p.get(field) or 0) for p in parts)
        for p in parts:
            add_counts(kind["errors"], p.get("errors"))
            add_counts(kind["bad_status_codes"], p.get("bad_status_codes"))
        for h in HISTOGRAMS:
            kind[h] = merge_histograms([p.get(h) for p in parts])
        # the first host's wrong reply of each class (hosts' clocks are not one)
        kind["wrong_replies"] = first_of_each([p.get("wrong_replies") for p in parts])
        kinds.append(kind)
    return kinds


def _merge_turnaround(docs: Sequence[Mapping[str, Any]]) -> dict[str, float] | None:
    parts = [d["totals"].get("turnaround_us") for d in docs]
    parts = [p for p in parts if isinstance(p, Mapping) and p.get("count")]
    if not parts:
        return None
    count = sum(float(p["count"]) for p in parts)
    # the mean merges exactly; the hosts' percentiles stay in their own documents
    return {
        "count": count,
        "mean": sum(float(p["mean"]) * float(p["count"]) for p in parts) / count,
    }


def _merge_timeline(
    docs: Sequence[Mapping[str, Any]], shifts: Sequence[float]
) -> list[dict[str, Any]]:
    """The hosts' timelines second by second on the controller's clock: a host's second i, which
    began `shift` seconds after the first host's start, counts in the merged second its middle
    falls in (the seconds themselves cannot be split)."""
    seconds: dict[int, dict[str, Any]] = {}
    for d, shift in zip(docs, shifts, strict=True):
        for s in d.get("timeline") or ():
            t = math.floor(int(s["t_s"]) + 0.5 + shift)
            row = seconds.setdefault(
                t,
                {"t_s": t, "completed": 0, "ok": 0, "errors": {}, "open_connections": 0},
            )
            row["completed"] += int(s.get("completed") or 0)
            row["ok"] += int(s.get("ok") or 0)
            row["open_connections"] += int(s.get("open_connections") or 0)
            row["resent"] = row.get("resent", 0) + int(s.get("resent") or 0)
            if "arrivals" in s:  # a trace's requests due in the second, from every host
                row["arrivals"] = row.get("arrivals", 0) + int(s["arrivals"])
            add_counts(row["errors"], s.get("errors"))
    # a second's percentiles cannot be merged from the hosts' percentiles: left out
    return [{**seconds[t], "p50_us": None, "p99_us": None} for t in sorted(seconds)]


def _merge_totals(docs: Sequence[Mapping[str, Any]], elapsed_s: float) -> dict[str, Any]:
    totals: dict[str, Any] = {"errors": {}, "bad_status_codes": {}}
    for field in _SUMMED_TOTALS:
        values = [d["totals"].get(field) for d in docs]
        if all(v is not None for v in values):  # a count some host lacks is left out, not guessed
            totals[field] = sum(map(int, values))
    for d in docs:
        add_counts(totals["errors"], d["totals"].get("errors"))
        add_counts(totals["bad_status_codes"], d["totals"].get("bad_status_codes"))
    windows = [d["totals"].get("window_s") for d in docs]
    totals["window_s"] = None if None in windows else max(float(w) for w in windows)
    if totals["window_s"] and totals.get("ok_in_window") is not None:
        totals["rps_ok"] = totals["ok_in_window"] / totals["window_s"]
    else:
        totals["rps_ok"] = totals["ok"] / elapsed_s if elapsed_s else 0.0
    totals["turnaround_us"] = _merge_turnaround(docs)
    return totals


def merge_results(
    plan: EnginePlan,
    docs: Sequence[Mapping[str, Any]],
    starts: Sequence[float],
    names: Sequence[str],
) -> dict[str, Any]:
    """One result document for the cell: `docs` as the hosts printed them, `starts` their real
    start instants in the controller's clock, `names` the hosts. Saturation of any host is the
    cell's, with the host named."""
    if not docs or not len(docs) == len(starts) == len(names):
        raise ValueError("one document, start and name per load host")
    first = min(starts)
    elapsed = max(s - first + float(d["elapsed_s"]) for d, s in zip(docs, starts, strict=True))
    costs = [d["cost"] for d in docs]
    reasons = [
        f"load host {name}: {r}"
        for d, name in zip(docs, names, strict=True)
        for r in d.get("saturation_reasons") or ()
    ]
    saturated = any(d.get("saturated") for d in docs)
    schedules = [d.get("schedule") or {} for d in docs]
    return {
        "format_version": docs[0]["format_version"],
        "engine": copy.deepcopy(docs[0].get("engine")),
        "plan": plan.to_dict(),
        "started_unix_s": first,
        "elapsed_s": elapsed,
        "totals": _merge_totals(docs, elapsed),
        "kinds": _merge_kinds(docs),
        "timeline": _merge_timeline(docs, [s - first for s in starts]),
        "cost": {
            "user_s": sum(float(c["user_s"]) for c in costs),
            "sys_s": sum(float(c["sys_s"]) for c in costs),
            # the busiest host: a share of one host's threads, not of all hosts together
            "cpu_fraction": max(float(c.get("cpu_fraction") or 0.0) for c in costs),
            "threads": sum(int(c.get("threads") or 1) for c in costs),
            "max_rss_kib": max(int(c.get("max_rss_kib") or 0) for c in costs),
            "nofile_limit": min(int(c.get("nofile_limit") or 0) for c in costs),
            "pinned_cpus": [],
            "pin_error": "; ".join(
                f"{n}: {c['pin_error']}"
                for n, c in zip(names, costs, strict=True)
                if c.get("pin_error")
            )
            or None,
            **_merged_io(costs),
        },
        "schedule": {
            "lag_p99_us": max(int(s.get("lag_p99_us") or 0) for s in schedules),
            "lag_max_us": max(int(s.get("lag_max_us") or 0) for s in schedules),
        },
        "saturated": saturated,
        "saturation_reasons": reasons or (["saturated"] if saturated else []),
        **merge_protocols(docs),
    }


def _merged_io(costs: list[dict[str, Any]]) -> dict[str, Any]:
    """The hosts' I/O backends (one name, or the names joined when they differ) and their
    system calls in all; nothing when no host recorded them."""
    backends = sorted({str(c["io_backend"]) for c in costs if c.get("io_backend")})
    if not backends:
        return {}
    merged: dict[str, Any] = {"io_backend": "+".join(backends)}
    if all(c.get("syscalls") is not None for c in costs):
        merged["syscalls"] = sum(int(c["syscalls"]) for c in costs)
    return merged
