"""What each seed states, claim by claim: the sentence quoted with its line, what it asserts (a
winner, a position, a figure, a ratio, an error onset, ...) and the seed's settings it depends on,
read strictly from results/seeds/<study>.toml beside the study that reproduces it."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEEDS_DIR = Path(__file__).resolve().parent / "seeds"

# Each kind of claim and the keys it must have beside the common ones (docs/seed-verdicts.md).
KINDS: dict[str, tuple[str, ...]] = {
    "winner": ("servers", "among"),  # the servers named are the best len(servers) of `among`
    "last": ("servers", "among"),  # ... the worst len(servers) of `among`
    "position": ("server", "position", "among"),  # the server is at that place of `among`
    "order": ("servers",),  # the servers named, best first, in this order
    "figure": ("server", "theirs"),  # our value within the tolerance of theirs
    "ratio": ("a", "b", "theirs"),  # a's value over b's within the tolerance of theirs
    "at_most": ("servers", "bound"),  # every value at or below the bound
    "at_least": ("servers", "bound"),  # every value at or above the bound
    "no_errors": ("servers",),  # not one error, as the seed's tool counted them
    "error_onset": ("server",),  # no errors below a level, errors from it (from_level or above)
    "steady": ("servers",),  # the largest value within the tolerance of the smallest, over levels
    "jump": ("server", "above", "factor"),  # the value past `above` is `factor` times the one below
    "rises": ("servers",),  # the value at the highest level beyond the tolerance above the lowest's
    "falls": ("servers",),  # ... beyond the tolerance below the lowest level's
    "no_fall": ("servers",),  # no level's value beyond the tolerance below the lowest level's
    "alike": ("servers",),  # the servers' largest value within the tolerance of their smallest
}
RANKS = ("winner", "last", "position", "order")
TRENDS = ("steady", "rises", "falls", "no_fall", "alike")  # their number is the tolerance
OPTIONAL = {
    "load",
    "level",
    "min_level",
    "max_level",
    "over",
    "tolerance",
    "counting",
    "threshold",
    "from_level",
    "above",
    "depends",
    "note",
    "not_measured",
    "rough",  # rank kinds: the seed words the order as rough or close (a swap within noise holds)
    "margin",  # winner: ahead of every other server by at least this factor
    "strict",  # at_most / at_least: strictly below / above the bound ("más de": more than)
    "request",  # a request kind's own latency (a load of several kinds)
    "threshold_source",  # "seed" or "project": whose are the claim's numbers
    "reading",  # the project's reading, in words (required with threshold_source = "project")
}
# Keys that put a number in a claim: a claim with one says whose it is (threshold_source).
NUMBER_KEYS = (
    "theirs",
    "bound",
    "factor",
    "threshold",
    "tolerance",
    "above",
    "from_level",
    "level",
    "min_level",
    "max_level",
    "position",
    "margin",
)
SOURCES = ("seed", "project")
COMMON = {"id", "kind", "what", "metric", "cite"}
# Metrics a claim may name: their unit, and which way is better, in words a verdict can use.
METRICS: dict[str, tuple[str, str]] = {
    "rps_ok": ("req/s", "higher"),
    "latency_mean_ms": ("ms", "lower"),
    "latency_p50_ms": ("ms", "lower"),
    "latency_p99_ms": ("ms", "lower"),
    "latency_max_ms": ("ms", "lower"),
    "error_rate": ("", "lower"),
    "errors": ("errors", "lower"),
    # a tool's read errors (wrk's "read", httperf's "connreset", ab's "receive") per reply it saw
    "read_errors_per_reply": ("", "lower"),
    "rss_peak_mb": ("MB", "lower"),
    "rss_start_mb": ("MB", "lower"),
    "rss_end_mb": ("MB", "lower"),
    "rss_per_process_mb": ("MB", "lower"),
    "rss_growth": ("×", "lower"),  # memory at the end of the test over memory at its start
    "cpu_pct": ("% of one core", "lower"),  # less strain on the system
    "keep_alive": ("", "higher"),  # 1: two requests answered on one connection (the check)
}
BETTER = {"higher": "higher is better", "lower": "lower is better"}
COUNTINGS = ("ours", "wrk", "httperf", "ab")
DEPENDS = ("cpus", "duration", "app_env", "memory", "requests")
OVER = ("each", "max", "min", "sum")


class BadClaims(ValueError):
    """A claims file that does not say what a claim needs (a bug of the project, not of a run)."""


@dataclass(frozen=True)
class Cite:
    line: int
    text: str


@dataclass(frozen=True)
class NotClaimed:
    """A line of the seed that states a finding no claim judges, and why not."""

    line: int
    reason: str


@dataclass(frozen=True)
class Claim:
    id: str
    kind: str
    what: str
    metric: str
    cite: tuple[Cite, ...]
    params: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.params.get(key, default)

    @property
    def counting(self) -> str:
        return str(self.params.get("counting", "ours"))

    @property
    def servers(self) -> list[str]:
        """Every server the claim is about (not the others it is ranked among)."""
        if self.kind == "ratio":
            return [self.params["a"], self.params["b"]]
        if "server" in self.params:
            return [self.params["server"]]
        return list(self.params.get("servers", []))

    @property
    def ranked(self) -> list[str]:
        """Every server a rank claim puts in its order: `among`, or the servers it names."""
        return list(self.params.get("among") or self.servers)

    @property
    def quoted(self) -> str:
        return " … ".join(f"“{c.text}” (line {c.line})" for c in self.cite)


@dataclass(frozen=True)
class SeedClaims:
    study: str
    seed: str
    file: str
    title: str
    counting: str  # the tool the seed measured with, whose error counting its claims use
    setup: dict[str, Any]
    claims: tuple[Claim, ...]
    # Lines of the seed that state a finding no claim judges, each with the reason
    not_claimed: tuple[NotClaimed, ...] = ()


def _claim(raw: dict[str, Any], where: str) -> Claim:
    kind = raw.get("kind")
    if kind not in KINDS:
        raise BadClaims(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    allowed = COMMON | set(KINDS[kind]) | OPTIONAL
    unknown = sorted(set(raw) - allowed)
    missing = sorted((COMMON | set(KINDS[kind])) - set(raw))
    if unknown or missing:
        raise BadClaims(f"{where}: unknown keys {unknown}, missing keys {missing}")
    if raw["metric"] not in METRICS:
        raise BadClaims(f"{where}: metric {raw['metric']!r} is not one of {', '.join(METRICS)}")
    if kind in ("no_errors", "error_onset") and raw["metric"] != "errors":
        raise BadClaims(f"{where}: a {kind} claim counts errors: metric must be 'errors'")
    if raw.get("counting", "ours") not in COUNTINGS:
        raise BadClaims(f"{where}: counting must be one of {COUNTINGS}")
    if raw.get("over", "each") not in OVER:
        raise BadClaims(f"{where}: over must be one of {OVER}")
    if not set(raw.get("depends", [])) <= set(DEPENDS):
        raise BadClaims(f"{where}: depends may name {DEPENDS} only")
    _check_options(raw, where)
    cites = raw["cite"]
    if not cites or not all(isinstance(c, dict) and set(c) == {"line", "text"} for c in cites):
        raise BadClaims(f"{where}: cite must be a list of {{line, text}}")
    params = {k: v for k, v in raw.items() if k not in COMMON}
    return Claim(
        str(raw["id"]),
        kind,
        str(raw["what"]),
        str(raw["metric"]),
        tuple(Cite(int(c["line"]), str(c["text"])) for c in cites),
        params,
    )


def _check_options(raw: dict[str, Any], where: str) -> None:
    """The keys that qualify a kind: only with the kinds they mean something for, and whose a
    claim's numbers are (the seed's or the project's reading, said in words)."""
    kind = raw["kind"]
    for key, kinds in (
        ("rough", RANKS),
        ("margin", ("winner",)),
        ("strict", ("at_most", "at_least")),
    ):
        if key in raw and kind not in kinds:
            raise BadClaims(f"{where}: {key} is for {', '.join(kinds)} claims only")
    numbered = kind in TRENDS or any(k in raw for k in NUMBER_KEYS)
    source = raw.get("threshold_source")
    if numbered and source not in SOURCES:
        raise BadClaims(f"{where}: a claim with a number says whose it is: threshold_source")
    if source is not None and source not in SOURCES:
        raise BadClaims(f"{where}: threshold_source is one of {SOURCES}")
    if (source == "project") != bool(raw.get("reading")):
        raise BadClaims(f"{where}: the project's reading (and only it) is said in `reading`")


def _not_claimed(raw: Any, study: str) -> tuple[NotClaimed, ...]:
    entries = raw if isinstance(raw, list) else []
    if not all(isinstance(e, dict) and set(e) == {"line", "reason"} for e in entries):
        raise BadClaims(f"{study}: not_claimed must be a list of {{line, reason}}")
    return tuple(NotClaimed(int(e["line"]), str(e["reason"])) for e in entries)


def parse(study: str, text: str) -> SeedClaims:
    """A claims file's text, checked: a mistake in it is an error, never a silent verdict."""
    raw = tomllib.loads(text)
    top = {"seed", "file", "title", "counting", "setup", "claim", "not_claimed"}
    if set(raw) - top or not {"seed", "file", "title", "claim"} <= set(raw):
        raise BadClaims(f"{study}: top-level keys must be {sorted(top)}")
    found = tuple(_claim(c, f"{study} claim {c.get('id', i)}") for i, c in enumerate(raw["claim"]))
    ids = [c.id for c in found]
    if len(set(ids)) != len(ids):
        raise BadClaims(f"{study}: claim ids repeat")
    return SeedClaims(
        study,
        str(raw["seed"]),
        str(raw["file"]),
        str(raw["title"]),
        str(raw.get("counting", "ours")),
        dict(raw.get("setup", {})),
        found,
        _not_claimed(raw.get("not_claimed", []), study),
    )


def claims(study: str) -> SeedClaims | None:
    """The seed's claims for a built-in seed study, or None when the study has no seed file."""
    path = SEEDS_DIR / f"{study}.toml"
    if not path.exists():
        return None
    return parse(study, path.read_text())


def studies() -> list[str]:
    return sorted(p.stem for p in SEEDS_DIR.glob("*.toml"))


def seed_text_dir(start: Path | None = None) -> Path | None:
    """Where the seed write-ups are (WSGIBENCH_SEEDS, else a `shared/seeds` beside a parent folder
    of `start`), or None: they are the project's inputs, not part of the package."""
    if os.environ.get("WSGIBENCH_SEEDS"):
        return Path(os.environ["WSGIBENCH_SEEDS"])
    here = (start or Path.cwd()).resolve()
    for parent in [here, *here.parents]:
        candidate = parent / "shared" / "seeds"
        if candidate.is_dir():
            return candidate
    return None
