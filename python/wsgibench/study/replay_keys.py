"""The keys of a [[load]] of model "replay" (an access log replayed; study/replay.py): the log,
its format, how its paths are grouped into kinds, the bodies and statuses the study gives kinds,
and the speeds; its capacity search takes the capacity keys of study/load_keys.py."""

from __future__ import annotations

from wsgibench.study.kinds import Flag, Int, Key, ListOf, Number, OneOrList, TableOf, Text
from wsgibench.traffic.formats import FORMATS, JSON_FIELDS
from wsgibench.traffic.model import DEFAULT_MAX_KINDS

_REPLAY = ("replay",)

REPLAY_KEYS: tuple[Key, ...] = (
    Key(
        "log",
        Text(what="a file's path"),
        "(required)",
        "replay: the access log (relative to the study's folder), read line by line: every "
        "request it logs is sent at its time, of its kind (`wsgibench traffic LOG` shows the "
        "model it makes).",
        example='log = "access.log"',
        models=_REPLAY,
        required=_REPLAY,
    ),
    Key(
        "format",
        Text(what=f"one of {', '.join(FORMATS)}, or a format string"),
        "read from the first lines",
        "replay: the log's format: " + ", ".join(f'"{f}"' for f in FORMATS) + ", an Apache "
        "`LogFormat` string, or gunicorn's `access_log_format`. Lines that do not read are "
        "counted and the first ones shown.",
        example="format = '%h %l %u %t \"%r\" %>s %b %D'",
        models=_REPLAY,
    ),
    Key(
        "json_fields",
        TableOf(Text(), names=", ".join(JSON_FIELDS)),
        "usual names",
        "replay, JSON lines: the log's field for each part of a request (time: Unix seconds or "
        "ISO 8601; or `request` for a whole request line).",
        example='json_fields = { time = "ts", path = "uri" }',
        models=_REPLAY,
    ),
    Key(
        "group",
        ListOf(Text(what="a path pattern")),
        "none",
        "replay: path patterns that make one kind of many paths, each `{name}` one segment "
        "(`/items/{id}`); the first that matches a path names its kind.",
        example='group = ["/items/{id}", "/users/{user}/posts"]',
        models=_REPLAY,
    ),
    Key(
        "group_auto",
        Flag(),
        "true",
        "replay: also group by rule: a segment of digits is `{id}`, a UUID `{uuid}`, a long hex "
        "string `{hex}`, and a query keeps its keys, each value `{}`. Each kind sends the first "
        "target logged with its commonest status.",
        models=_REPLAY,
    ),
    Key(
        "bodies",
        TableOf(Text(), names="kind names"),
        "none",
        "replay: the body of each POST, PUT or PATCH kind, a file (relative to the study's "
        "folder; its Content-Type by its suffix): the log holds none, so a kind without one is "
        "left out, and said.",
        example='bodies = { "POST /orders" = "order.json" }',
        models=_REPLAY,
    ),
    Key(
        "expect_status",
        TableOf(Int(low=100, high=999), names="kind names"),
        "the logged",
        "replay: a kind's valid status, where it is not the one the log holds most for it.",
        example='expect_status = { "GET /items/{id}" = 200 }',
        models=_REPLAY,
    ),
    Key(
        "max_kinds",
        Int(low=1, high=1000),
        str(DEFAULT_MAX_KINDS),
        "replay: the most kinds replayed, the commonest; the rarer ones are left out, and said.",
        "kinds",
        models=_REPLAY,
    ),
    Key(
        "speed",
        OneOrList(Number(low=0, above=True)),
        "1",
        "replay: the pace, 2 = the log's traffic in half the time (each second of the log "
        "twice as busy); a list sweeps them as levels; with `slo_p99_ms`, the speed the capacity "
        "search starts at.",
        "× the log",
        "speed = [0.5, 1, 2]",
        models=_REPLAY,
    ),
    Key(
        "max_speed",
        Number(low=0, above=True),
        "100",
        "replay with slo_p99_ms: the highest speed the capacity search tries.",
        "× the log",
        models=_REPLAY,
    ),
    Key(
        "slo_per_kind",
        Flag(),
        "false",
        "replay with slo_p99_ms: every kind's own p99 (and p50) within the budget, not only all "
        "requests' together.",
        models=_REPLAY,
    ),
)
