"""`show`'s cell rows as the terminal and Markdown print them: the columns, each figure as text
(req/s whole, latency in ms with "≥" for a lower bound, errors in %), the short tags of the
diagnoses and statuses with their legend, and the table's layout (cli/fit.py)."""

from __future__ import annotations

from wsgibench.baseline import BASELINE
from wsgibench.cli.fit import Layout
from wsgibench.report.format import caps_short, cores, cv, kinds, mib, ms, pct, whole
from wsgibench.results.summary import CellSummary, placement_text
from wsgibench.results.verdict import CellStatus

SORTS = {
    "rps": ("rps_ok", True),
    "p50": ("latency_p50_us", False),
    "p99": ("latency_p99_us", False),
    "errors": ("error_rate", False),
    "cpu": ("cpu_mean_pct", False),
    "memory": ("rss_peak_bytes", False),
}
# Diagnosis code -> the short tag `show` prints (the legend below the tables explains each).
TAGS = {
    "engine-saturated": "sat",
    "contended": "busy",
    "littles-law": "little",
    "no-keep-alive": "no-ka",
    "no-pipelining": "no-pipe",
    "listen-overflow": "backlog",
    "nagle": "nagle",
    "logging": "log",
    "waiting": "wait",
    "unannounced-close": "silent-close",
    "closes-after-n": "ka-limit",
}
STATUS_TAGS = {
    CellStatus.DEATHS: "DEATHS",
    CellStatus.CONTENDED: "CONTENDED",
    CellStatus.INVALID: "INVALID",
    CellStatus.DISQUALIFIED: "DQ",
    CellStatus.UNAVAILABLE: "n/a",
    CellStatus.FAILED: "FAIL",
}
# --wide: beside our error rate, the errors the seeds' tools would have counted on the same
# requests (results/seed_errors.py), column -> tool.
TOOL_COLUMNS = {"wrk err": "wrk", "httperf err": "httperf"}
# The key column first, the figures right-aligned, the prose wrapping; the columns in order of
# importance when a table is split to fit the terminal (cli/fit.py).
SHOW_LAYOUT = Layout(
    key="server",
    right=frozenset(
        (
            "req/s",
            "cores",
            "req/CPU-s",
            "cv",
            "p50 ms",
            "p99 ms",
            "replies p99 ms",
            "errors",
            "wrk err",
            "httperf err",
            "cpu %",
            "MiB",
        )
    ),
    prose=frozenset(("tags", "behaviour", "notes")),
    order=("req/s", "p99 ms", "p50 ms", "errors", "cv", "tags", "iface", "version", "cpu %", "MiB"),
)


def row(
    s: CellSummary,
    trim: int,
    wide: bool,
    tools: dict[str, float | None] | None = None,
) -> dict[str, str]:
    """One cell as the columns `show` prints (the same in every format); `tools`: the cell's
    error rates as the seeds' tools counted them (--wide shows them beside ours)."""
    c = s.cell
    tags = [STATUS_TAGS[c.status]] if c.status in STATUS_TAGS else []
    tags += [TAGS.get(d["code"], d["code"]) for d in c.diagnoses]
    server = f"▲ {c.server} (ceiling)" if c.server == BASELINE else c.server
    out = {
        "server": server,
        "iface": s.interface_short,
        "version": s.version or "-",
        "req/s": whole(s.value("rps_ok", "trimmed_mean" if trim else "median")),
        # --wide: the server's cores used (its threads' CPU seconds per second) and valid replies
        # per CPU-second of them, beside req/s
        **(
            {"cores": cores(s.value("cores_used")), "req/CPU-s": whole(s.value("per_cpu_s"))}
            if wide
            else {}
        ),
        "cv": cv(s.stats["rps_ok"]),
        "p50 ms": _latency(s, "latency_p50_us"),
        "p99 ms": _latency(s, "latency_p99_us"),
        # --wide: the complete replies' own p99, failures left out
        **({"replies p99 ms": ms(s.value("reply_latency_p99_us"), ".2f")} if wide else {}),
        "errors": pct(s.value("error_rate")),
        **{column: pct((tools or {}).get(tool)) for column, tool in TOOL_COLUMNS.items() if wide},
        "cpu %": whole(s.value("cpu_mean_pct")),
        "MiB": mib(s.value("rss_peak_bytes")),
        "tags": " ".join(dict.fromkeys(tags)),
    }
    if wide:
        said = [c.reason, placement_text(c.isolation), kinds(s.kinds), *c.notes]
        out["behaviour"] = caps_short(c.capabilities)
        out["notes"] = "; ".join(filter(None, [*said, *(d["message"] for d in c.diagnoses)]))
    return out


def _latency(s: CellSummary, metric: str) -> str:
    """A latency in ms; "≥" before it when it falls on failed requests (a lower bound)."""
    text = ms(s.value(metric), ".2f")
    return f"≥{text}" if s.bound(metric) and text != "-" else text
