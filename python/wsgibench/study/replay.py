"""A [[load]] of model "replay": an access log's requests sent at their times by the engine's
`trace` model. `ReplaySpec` is what the study says of it (study/replay_keys.py); its traffic model
is read once per process (traffic/), its schedule written once into the cache, and its kinds are
the load's request kinds: each sends its example target, expects its logged status (or the one
the study gives), and carries the body the study names for it."""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wsgibench.errors import UsageError
from wsgibench.paths import cache_dir
from wsgibench.study.kinds import nearest
from wsgibench.traffic import schedule
from wsgibench.traffic.formats import json_reader, reader
from wsgibench.traffic.grouping import Grouping
from wsgibench.traffic.model import DEFAULT_MAX_KINDS, TrafficModel, model_of
from wsgibench.traffic.read import read_log

# A kind whose log holds no status (a format without %s) is taken to expect this one.
ASSUMED_STATUS = 200


@dataclass(frozen=True)
class Body:
    kind: str
    text: str
    content_type: str | None


@dataclass(frozen=True)
class ReplaySpec:
    log: Path
    format: str | None = None
    json_fields: tuple[tuple[str, str], ...] = ()
    group: tuple[str, ...] = ()
    group_auto: bool = True
    bodies: tuple[Body, ...] = ()
    expect_status: tuple[tuple[str, int], ...] = ()
    max_kinds: int = DEFAULT_MAX_KINDS
    slo_per_kind: bool = False

    def traffic(self) -> TrafficModel:
        """The log's traffic model (read once per process while the log is unchanged)."""
        return _built(self)[0]

    def schedule_path(self) -> Path:
        return _built(self)[1]

    def plan_fields(self) -> dict[str, Any]:
        """The trace model's fields of the engine plan: its schedule, requests and span."""
        model = self.traffic()
        return {
            "schedule": str(self.schedule_path()),
            "schedule_requests": model.requests,
            "span_s": model.span_s,
        }

    def request_tables(self) -> list[dict[str, Any]]:
        """The load's request kinds, as [[requests]] tables: each kind's example target, its
        share as its weight, its valid status, and its body where the study names one."""
        _check_named(self)
        bodies = {b.kind: b for b in self.bodies}
        expected = self.expected()
        tables = []
        for k in self.traffic().kinds:
            body = bodies.get(k.name)
            tables.append(
                {
                    "name": k.name,
                    "method": k.method,
                    "path": k.example,
                    "weight": float(k.count),
                    "headers": dict(_content_type(body)),
                    "body": body.text if body else "",
                    "expect": {"status": expected[k.name][0]},
                }
            )
        return tables

    def expected(self) -> dict[str, tuple[int, str]]:
        """Each kind's valid status, and where it comes from (the log, the study, assumed)."""
        given = dict(self.expect_status)
        out = {}
        for k in self.traffic().kinds:
            if k.name in given:
                out[k.name] = (given[k.name], "the study")
            elif k.status is not None:
                out[k.name] = (k.status, "the log")
            else:
                out[k.name] = (ASSUMED_STATUS, "assumed: the log holds none")
        return out


def parse_replay(values: dict[str, Any], where: str, base: Path) -> ReplaySpec:
    """The replay a [[load]] table's checked values describe; a log that cannot be read, a
    format that cannot be, a pattern or a body file that is wrong, are one line each."""
    log = base / values["log"]
    if not log.is_file():
        raise UsageError(f"{where}: log {values['log']!r}: no such file ({log})")
    fmt = values.get("format")
    fields = tuple(sorted(values.get("json_fields", {}).items()))
    try:
        if fields and fmt not in (None, "json"):
            raise UsageError('json_fields are for format = "json"')
        if fields:
            json_reader(dict(fields))
            fmt = "json"
        elif fmt is not None:
            reader(fmt)
        Grouping.of(values.get("group", ()))
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    bodies = tuple(
        _body(kind, name, base, where) for kind, name in values.get("bodies", {}).items()
    )
    return ReplaySpec(
        log=log.resolve(),
        format=fmt,
        json_fields=fields,
        group=tuple(values.get("group", ())),
        group_auto=values.get("group_auto", True),
        bodies=bodies,
        expect_status=tuple(sorted(values.get("expect_status", {}).items())),
        max_kinds=values.get("max_kinds", DEFAULT_MAX_KINDS),
        slo_per_kind=values.get("slo_per_kind", False),
    )


def _body(kind: str, name: str, base: Path, where: str) -> Body:
    method = kind.split(" ", 1)[0]
    if method not in ("POST", "PUT", "PATCH") or " /" not in kind:
        raise UsageError(
            f'{where}: bodies: {kind!r} is not a POST, PUT or PATCH kind ("POST /path")'
        )
    path = base / name
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{where}: bodies: {kind!r}: {name!r} cannot be read: {exc}") from None
    return Body(kind, text, mimetypes.guess_type(path.name)[0])


def _check_named(spec: ReplaySpec) -> None:
    """A kind the study names (bodies, expect_status) is one of the log's (replayed or left
    out); a UsageError names the one that is not, and the nearest that is."""
    model = spec.traffic()
    names = [k.name for k in model.kinds] + [left.what for left in model.left_out]
    for key, kind in [("bodies", b.kind) for b in spec.bodies] + [
        ("expect_status", k) for k, _ in spec.expect_status
    ]:
        if kind not in names:
            raise UsageError(
                f"replay of {spec.log.name}: {key}: {kind!r} is no kind of the log"
                + nearest(kind, names)
            )


_BUILT: dict[tuple[ReplaySpec, int, int], tuple[TrafficModel, Path]] = {}


def _built(spec: ReplaySpec) -> tuple[TrafficModel, Path]:
    try:
        stat = spec.log.stat()
    except OSError as exc:
        raise UsageError(f"access log {spec.log}: {exc.strerror or exc}") from None
    key = (spec, stat.st_size, stat.st_mtime_ns)
    found = _BUILT.get(key)
    if found is None:
        grouping = Grouping.of(spec.group, spec.group_auto)
        reading = read_log(spec.log, spec.format, grouping, dict(spec.json_fields))
        model = model_of(reading, {b.kind for b in spec.bodies}, spec.max_kinds)
        if not model.requests:
            raise UsageError(f"access log {spec.log}: nothing left to replay ({_why(model)})")
        found = _BUILT[key] = (model, schedule.write(model, cache_dir() / "traces"))
    return found


def _why(model: TrafficModel) -> str:
    return "; ".join(f"{x.what}: {x.why}" for x in model.left_out) or "no request"


def _content_type(body: Body | None) -> tuple[tuple[str, str], ...]:
    if body is None or body.content_type is None:
        return ()
    return (("Content-Type", body.content_type),)
