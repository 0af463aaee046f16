"""Worker deaths in a repeat: each exit of a server process named (exit status, signal, OOM kill,
the server's own worker timeout), the requests lost with them (the engine's re-sends and broken
connections in the seconds a worker died), and the one line that says so."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from wsgibench.machine.deathwatch import Deaths, Exit
from wsgibench.results.engine_result import EngineResult

# How servers log that they killed a stuck worker themselves, each naming its pid.
WORKER_TIMEOUT_LINES = (
    re.compile(r"WORKER TIMEOUT \(pid:\s*(\d+)\)"),  # gunicorn's arbiter
    re.compile(r"HARAKIRI ON WORKER \d+ \(pid:\s*(\d+)"),  # uWSGI's harakiri
)
# A request lost with a dead worker: its connection broke (reset, closed before the reply), or
# the engine re-sent it after the close, in a second a worker died in or the one either side.
LOST_CLASSES = ("reset", "closed_before_response")
NEAR_S = 1
SIGKILL = 9


def name_exits(deaths: Deaths, oom_kills: int, log_text: str) -> Deaths:
    """The exits with what only the cgroup and the server's log can tell: the group's OOM kills
    (the kernel's SIGKILL) and the workers the server's own timeout killed (its log names them)."""
    timed_out = {int(m) for rx in WORKER_TIMEOUT_LINES for m in rx.findall(log_text)}
    left = oom_kills
    named: list[Exit] = []
    for e in deaths.exits:
        if e.pid in timed_out:
            e = replace(e, timed_out=True)
        elif left > 0 and e.signal == SIGKILL:
            e, left = replace(e, oom=True), left - 1
        named.append(e)
    return Deaths(named, deaths.appeared, deaths.source)


@dataclass(frozen=True)
class Lost:
    """Requests lost with dead workers: those the engine re-sent and those whose connection
    broke, in the seconds a worker died in (and the one either side of each)."""

    resent: int
    broken: dict[str, int]
    seconds: tuple[int, ...]

    @property
    def requests(self) -> int:
        return self.resent + sum(self.broken.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "resent": self.resent,
            "broken": self.broken,
            "seconds": list(self.seconds),
        }


def lost_with(result: EngineResult, exits: list[Exit]) -> Lost:
    """The requests the repeat lost with its dead workers, from the engine's timeline."""
    start = result.started_unix_s
    near: set[int] = set()
    for e in exits:
        second = int(e.at_unix_s - start)
        near.update(range(second - NEAR_S, second + NEAR_S + 1))
    rows = [s for s in result.timeline if s.t_s in near]
    broken = {c: n for c in LOST_CLASSES if (n := sum(s.errors.get(c, 0) for s in rows))}
    return Lost(sum(s.resent for s in rows), broken, tuple(sorted(s.t_s for s in rows)))


def describe(exits: list[Exit]) -> str:
    """ "3 worker processes died: 2 exit status 1, 1 OOM kill under the memory limit"."""
    kinds = Counter(e.how for e in exits)
    how = ", ".join(f"{n} {what}" for what, n in kinds.most_common())
    noun = "worker process died" if len(exits) == 1 else "worker processes died"
    return f"{len(exits)} {noun}: {how}"


def record(deaths: Deaths, lost: Lost) -> dict[str, Any]:
    """What a repeat stores of its deaths (its extra record's `worker_deaths`)."""
    return {**deaths.as_dict(), "count": len(deaths.exits), "lost": lost.as_dict()}


def exits_of(stored: dict[str, Any]) -> list[Exit]:
    """The exits of a stored `worker_deaths` record."""
    fields = ("pid", "at_unix_s", "status", "signal", "oom", "timed_out")
    return [Exit(**{k: e.get(k) for k in fields}) for e in stored.get("exits") or ()]


def stored_count(extra: dict[str, Any]) -> int:
    """The deaths a stored repeat recorded (0 for a store from before)."""
    found = extra.get("worker_deaths")
    return int(found.get("count") or 0) if isinstance(found, dict) else 0


def life_record(seen: Deaths, oom_kills: int, log_text: str) -> dict[str, Any]:
    """What a server start stores of its processes' deaths over its whole life (checks, warm-up
    and repeats, up to the stop): how many, how, and how many processes appeared."""
    named = name_exits(seen, oom_kills, log_text)
    return {
        "count": len(named.exits),
        "how": dict(Counter(e.how for e in named.exits)),
        "appeared": named.appeared,
        "source": named.source,
    }


def added(records: list[dict[str, Any] | None]) -> dict[str, Any]:
    """Several starts' life records as one."""
    how: Counter[str] = Counter()
    for r in records:
        how.update((r or {}).get("how") or {})
    return {
        "count": sum(int((r or {}).get("count") or 0) for r in records),
        "how": dict(how),
        "appeared": sum(int((r or {}).get("appeared") or 0) for r in records),
        "source": next((r["source"] for r in records if r and r.get("source")), ""),
    }


def cell_note(isolation: dict[str, Any] | None, repeats: list[Any]) -> str | None:
    """How many of the server's processes died over a cell's starts (checks and warm-up too, up
    to each stop), and how many of those during the measured repeats (None: none died)."""
    life = (isolation or {}).get("worker_deaths") or {}
    if not life.get("count"):
        return None
    during = sum(
        int(((r.counters.worker_deaths if r.counters else None) or {}).get("count") or 0)
        for r in repeats
    )
    how = ", ".join(f"{n} {what}" for what, n in sorted(life["how"].items(), key=lambda x: -x[1]))
    return (
        f"{life['count']} server process(es) died over the cell ({how}), {during} of them during "
        "the measured repeats"
    )
