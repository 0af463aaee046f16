"""`show --format json|csv|md`: every table `show` prints as rows of values, numbers as numbers
(req/s 7537.2, not "7,537"), in the units the table heads say: the cells of each load and level,
each cell's request kinds, each capacity load's capacities and its steps, a tuning's trials, and
the verdicts against the seed; JSON keeps each table under its name, CSV puts them one after the
other under a `table` column, Markdown writes each as a table."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wsgibench.baseline import BASELINE
from wsgibench.report.capacity import MARKS
from wsgibench.results.capacity_read import ServerCapacity
from wsgibench.results.kind_figures import KindFigures
from wsgibench.results.summary import CellSummary
from wsgibench.results.tuning import TuneRecord

Row = dict[str, Any]


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1000


def _pct(fraction: float | None) -> float | None:
    return None if fraction is None else fraction * 100


def cell_values(
    s: CellSummary, trim: int, wide: bool, tools: Mapping[str, float | None] | None
) -> Row:
    """One cell as numbers: req/s, latency in ms (each with whether it is a lower bound), errors
    and cv in percent, CPU in % of one core, memory in MiB; --wide adds what the table adds."""
    c = s.cell
    how = "trimmed_mean" if trim else "median"
    rps = s.stats.get("rps_ok")
    out: Row = {
        "load": c.load,
        "level": c.level,
        "server": c.server,
        "ceiling": c.server == BASELINE,
        "status": str(c.status),
        "iface": s.interface_short,
        "version": s.version,
        "req/s": s.value("rps_ok", how),
    }
    if wide:
        out |= {"cores": s.value("cores_used"), "req/CPU-s": s.value("per_cpu_s")}
    out |= {
        "cv %": _pct(rps.cv) if rps is not None and rps.n > 1 else None,
        "p50 ms": _ms(s.value("latency_p50_us")),
        "p50 lower bound": s.bound("latency_p50_us"),
        "p99 ms": _ms(s.value("latency_p99_us")),
        "p99 lower bound": s.bound("latency_p99_us"),
    }
    if wide:
        out["replies p99 ms"] = _ms(s.value("reply_latency_p99_us"))
    out["errors %"] = _pct(s.value("error_rate"))
    if wide:
        out |= {f"{tool} err %": _pct((tools or {}).get(tool)) for tool in ("wrk", "httperf")}
    rss = s.value("rss_peak_bytes")
    out |= {
        "cpu %": s.value("cpu_mean_pct"),
        "MiB": None if rss is None else rss / 2**20,
        "diagnoses": [d["code"] for d in c.diagnoses],
        "reason": c.reason,
    }
    if wide:
        out |= {
            "notes": list(c.notes) + [d["message"] for d in c.diagnoses],
            "wrong_replies": [w.summary() for w in s.wrong_replies],
        }
    return out


def kind_values(server: str, load: str, level: float, k: KindFigures) -> Row:
    return {
        "load": load,
        "level": level,
        "server": server,
        "kind": k.name,
        "requests": k.sent,
        "req/s": k.rps_ok,
        "p50 ms": _ms(k.p50_us),
        "p90 ms": _ms(k.p90_us),
        "p99 ms": _ms(k.p99_us),
        "errors %": _pct(k.error_rate),
        "classes": k.classes_text(),
    }


def capacity_values(c: ServerCapacity) -> Row:
    """A server's capacity in requests/s (a replay's also as its speed, × the log)."""
    r = c.result
    half, full = c.cost_at(0.5), c.cost_at(1.0)
    out: Row = {
        "load": c.load,
        "server": c.server,
        "budget": c.budget.describe(),
        "capacity req/s": c.requests(r.capacity),
        "capacity at least": r.capacity is not None and r.above is None,
        "missed from req/s": c.requests(r.above),
        "errors from req/s": c.requests(r.error_onset),
        "CPU µs/req 50%": half.cpu_us_per_request if half else None,
        "CPU µs/req 100%": full.cpu_us_per_request if full else None,
        "MiB": full.rss_mib if full else None,
        "workers": c.workers,
        "stopped": r.stopped,
    }
    if c.replay:
        out["capacity (× the log)"] = r.capacity
    return out


def step_values(c: ServerCapacity) -> list[Row]:
    """A capacity search's steps in the order they ran: the rate, met or missed, and why."""
    return [
        {
            "load": c.load,
            "server": c.server,
            "step": i + 1,
            "req/s": c.requests(s.rate),
            **({"speed (× the log)": s.rate} if c.replay else {}),
            "verdict": s.status.value,
            "mark": MARKS[s.status],
            "why": s.reason,
            "cell": s.cell_id,
        }
        for i, s in enumerate(c.result.steps)
    ]


def tuning_values(record: TuneRecord) -> list[Row]:
    """A tuning's trials ranked (the last round first), the winner marked."""
    return [
        {
            "rank": i,
            "setting": t.setting,
            "round": t.round,
            "capacity req/s": t.capacity,
            "capacity at least": bool(t.limited),
            "missed from req/s": t.above,
            "CPU µs/req": t.cpu_us,
            "MiB": t.rss_mib,
            "winner": t.setting == record.winner,
            "tied": t.setting in record.tied,
            "note": t.note,
        }
        for i, t in enumerate(record.ranked(), 1)
    ]


@dataclass
class Tables:
    """Every table of a `show`, by name, in the order they are written."""

    study: Row
    tables: dict[str, list[Row]] = field(default_factory=dict)
    tuning: TuneRecord | None = None

    def add(self, name: str, rows: Sequence[Row]) -> None:
        if rows:
            self.tables.setdefault(name, []).extend(rows)

    def as_json(self) -> str:
        doc: dict[str, Any] = {"study": self.study, **self.tables}
        if self.tuning is not None:
            doc["tuning_winner"] = {
                "winner": self.tuning.winner,
                "command": self.tuning.command,
                "stopped": self.tuning.stopped,
            }
        return json.dumps(doc, indent=1, ensure_ascii=False)

    def as_csv(self) -> str:
        """One CSV: each table's rows under a `table` column, the header every column of all."""
        rows = [{"table": name, **_flat(r)} for name, rs in self.tables.items() for r in rs]
        if not rows:
            return ""
        heads = list(dict.fromkeys(k for r in rows for k in r))
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=heads)
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue()


def _flat(row: Row) -> Row:
    """A row for CSV: lists joined with " | ", none as empty."""
    return {
        k: " | ".join(map(str, v)) if isinstance(v, list) else ("" if v is None else v)
        for k, v in row.items()
    }


def markdown(name: str, rows: Sequence[Row]) -> list[str]:
    """A table of `rows` in Markdown (numbers as the JSON has them, lists joined)."""
    if not rows:
        return []
    heads = list(dict.fromkeys(k for r in rows for k in r))
    lines = [f"### {name}", "", "| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for r in rows:
        cells = [str(_flat(r).get(h, "")).replace("|", "\\|").replace("\n", " ") for h in heads]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]
