"""Access-log formats: a line read into one `Record` (when, method, target, status, size).

Apache's and nginx's combined and common formats, gunicorn's access log (its default format, or
its own `access_log_format` atoms), any Apache `LogFormat` string (compiled by apachelogs), and
JSON lines with named fields. `detect` picks one from a log's first lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from apachelogs import COMBINED, COMMON, InvalidDirectiveError, UnknownDirectiveError
from apachelogs.directives import format2regex
from apachelogs.timeutil import assemble_datetime

from wsgibench.errors import UsageError


class BadLine(ValueError):
    """A line the format does not read; the message says why."""


@dataclass(frozen=True, slots=True)
class Record:
    """One logged request. `time_s` is Unix seconds; `precise` when the log gave more than the
    second (else the request is somewhere within that second)."""

    time_s: float
    precise: bool
    method: str
    target: str  # path and query, as requested
    status: int | None
    size: int | None  # the response's bytes, as logged (None: not logged)


Reader = Callable[[str], Record]

# gunicorn's default access_log_format is the combined format.
NAMED = {"combined": COMBINED, "common": COMMON, "gunicorn": COMBINED, "nginx": COMBINED}
FORMATS = (*NAMED, "json")
# gunicorn's access-log atoms, as Apache directives (those with one); %(q)s (the query without
# its "?") and %(L)s (decimal seconds) have none.
_GUNICORN_ATOMS = {
    "h": "%h",
    "l": "%l",
    "u": "%u",
    "t": "%t",
    "r": "%r",
    "m": "%m",
    "U": "%U",
    "H": "%H",
    "s": "%>s",
    "B": "%B",
    "b": "%b",
    "f": "%{Referer}i",
    "a": "%{User-Agent}i",
    "T": "%T",
    "D": "%D",
    "M": "%{ms}T",
    "p": "%P",
}
_GUNICORN_ATOM = re.compile(r"%\((\w+)\)s|%\(\{([^}]+)\}([ioe])\)s")


def reader(fmt: str, json_fields: Mapping[str, str] | None = None) -> Reader:
    """The reader of a named format, a LogFormat string (with % directives) or gunicorn's
    access_log_format (with %(x)s atoms); UsageError names what is wrong with it. JSON lines
    name their fields in `json_fields` (others are looked for by usual names)."""
    if fmt == "json":
        return json_reader(json_fields)
    if fmt in NAMED:
        return logformat_reader(NAMED[fmt])
    if "%(" in fmt:
        return logformat_reader(gunicorn_logformat(fmt))
    if "%" in fmt:
        return logformat_reader(fmt)
    raise UsageError(
        f"log format {fmt!r}: one of {', '.join(FORMATS)}, an Apache LogFormat string or a "
        "gunicorn access_log_format"
    )


def gunicorn_logformat(fmt: str) -> str:
    """gunicorn's access_log_format as the Apache LogFormat that writes the same line."""

    def atom(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            directive = _GUNICORN_ATOMS.get(m.group(1))
            if directive is None:
                raise UsageError(f"gunicorn log format: atom %({m.group(1)})s cannot be read")
            return directive
        return f"%{{{m.group(2)}}}{m.group(3)}"

    return _GUNICORN_ATOM.sub(atom, fmt.replace("%%", "\0")).replace("\0", "%%")


def logformat_reader(fmt: str) -> Reader:
    """A reader of an Apache LogFormat string: apachelogs compiles it; only the fields a record
    needs are converted (the time once for all the lines that log the same one)."""
    try:
        groups, pattern = format2regex(fmt)
    except (InvalidDirectiveError, UnknownDirectiveError) as exc:
        raise UsageError(f"log format {fmt!r}: {exc}") from None
    rx = re.compile(pattern)
    fields = {_field(name): (i, conv) for i, (name, _, conv) in enumerate(groups)}
    clock = _Clock(groups)
    if not clock.parts or ("request_line" not in fields and "request_uri" not in fields):
        raise UsageError(
            f"log format {fmt!r}: needs the time (%t) and the request (%r, or %m with %U)"
        )
    pick = _Picker(fields)

    def read(line: str) -> Record:
        m = rx.fullmatch(line.rstrip("\r\n"))
        if m is None:
            raise BadLine("does not match the format")
        g = m.groups()
        try:
            at, precise = clock.read(g)
            method, target = pick.request(g)
            return Record(at, precise, method, target, pick.int(g, "status"), pick.int(g, "bytes"))
        except BadLine:
            raise
        except ValueError as exc:  # apachelogs refused a field the pattern let through
            raise BadLine(f"a field does not read ({exc})") from None

    return read


_FRACTIONS = frozenset({"msec_frac", "usec_frac", "milliepoch", "microepoch"})


class _Clock:
    """A LogFormat line's time: its time directives' groups assembled by apachelogs (a lone %t,
    or %{...}t parts), cached by their text, since many lines log the same second."""

    def __init__(self, groups: list[tuple[Any, str, Callable[[str], Any]]]):
        self.parts = [
            (i, name[1], conv)
            for i, (name, _, conv) in enumerate(groups)
            if isinstance(name, tuple) and name[0] == "request_time_fields"
        ]
        self.precise = any(sub in _FRACTIONS for _, sub, _ in self.parts)
        self.seen: dict[tuple[str, ...], float] = {}

    def read(self, g: tuple[str, ...]) -> tuple[float, bool]:
        key = tuple(g[i] for i, _, _ in self.parts)
        at = self.seen.get(key)
        if at is None:
            if len(self.seen) > 4096:
                self.seen.clear()
            at = self.seen[key] = self._assemble(key)
        return at, self.precise

    def _assemble(self, key: tuple[str, ...]) -> float:
        values = {sub: conv(text) for (_, sub, conv), text in zip(self.parts, key, strict=True)}
        when = assemble_datetime(values)
        if when is None:
            raise BadLine("the time's parts do not make a time")
        if when.tzinfo is None:
            raise BadLine("a time without its zone")
        at: float = when.timestamp()
        for sub, scale in (("msec_frac", 1e3), ("usec_frac", 1e6)):
            if values.get(sub) is not None and when.microsecond == 0:
                at += values[sub] / scale
        return at


def _field(name: str | tuple[str, ...]) -> str:
    """The field an apachelogs group fills: its name, or its first part (the time's fields)."""
    if isinstance(name, tuple):
        return name[0]
    return {"final_status": "status", "bytes_out": "bytes", "bytes_sent": "bytes"}.get(name, name)


class _Picker:
    """The groups of a LogFormat line that a record needs, converted as apachelogs converts them
    (plain digits, and text with no escape and not "-", need no converting: a fast path)."""

    def __init__(self, fields: Mapping[str, tuple[int, Callable[[str], Any]]]):
        self.fields = fields

    def text(self, g: tuple[str, ...], name: str) -> str | None:
        found = self.fields.get(name)
        if found is None:
            return None
        raw = g[found[0]]
        if raw != "-" and "\\" not in raw:
            return raw
        value = found[1](raw)
        return value.decode("latin-1") if isinstance(value, bytes) else value

    def int(self, g: tuple[str, ...], name: str) -> int | None:
        found = self.fields.get(name)
        if found is None:
            return None
        raw = g[found[0]]
        if raw.isdigit():
            return int(raw)
        value = found[1](raw)
        return value if isinstance(value, int) else None

    def request(self, g: tuple[str, ...]) -> tuple[str, str]:
        line = self.text(g, "request_line")
        if line is not None:
            return request_line(line)
        method, path = self.text(g, "request_method"), self.text(g, "request_uri")
        if not method or not path:
            raise BadLine("no request method or path")
        return method, path + (self.text(g, "request_query") or "")


def request_line(line: str) -> tuple[str, str]:
    """Method and target of a request line ("GET /a?b=1 HTTP/1.1"); an absolute URL's path."""
    parts = line.split(" ")
    if len(parts) < 2 or not parts[0].isalpha():
        raise BadLine(f"no request in {line[:60]!r}")
    target = parts[1]
    if "://" in target:
        rest = target.split("://", 1)[1]
        target = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    if not target.startswith("/"):
        raise BadLine(f"request target {target[:60]!r} is not a path")
    return parts[0].upper(), target


# JSON lines: the fields tried for each part of a record, in order, when the study names none.
JSON_FIELDS: dict[str, tuple[str, ...]] = {
    "time": ("time", "timestamp", "@timestamp", "ts", "time_local", "time_iso8601", "msec"),
    "method": ("method", "request_method", "verb"),
    "path": ("path", "uri", "request_uri", "url", "target"),
    "query": ("query", "query_string", "args"),
    "request": ("request", "request_line"),
    "status": ("status", "status_code", "code"),
    "size": ("bytes", "size", "body_bytes_sent", "bytes_sent", "response_size", "length"),
}


def json_reader(names: Mapping[str, str] | None = None) -> Reader:
    """A reader of JSON lines; `names` maps a record's parts (time, method, path, query, request,
    status, size) to the log's own field names (the others are looked for by usual names)."""
    given = dict(names or {})
    unknown = set(given) - set(JSON_FIELDS)
    if unknown:
        raise UsageError(
            f"JSON log fields: no part {', '.join(sorted(unknown))} (parts: {', '.join(JSON_FIELDS)})"
        )
    tried = {part: (given[part],) if part in given else keys for part, keys in JSON_FIELDS.items()}

    def read(line: str) -> Record:
        try:
            doc = json.loads(line)
        except ValueError:
            raise BadLine("not JSON") from None
        if not isinstance(doc, dict):
            raise BadLine("not a JSON object")
        found = {
            part: next((doc[k] for k in keys if k in doc), None) for part, keys in tried.items()
        }
        at, precise = json_time(found["time"])
        if found["request"] is not None and found["path"] is None:
            method, target = request_line(str(found["request"]))
        elif found["method"] is not None and found["path"] is not None:
            method, target = str(found["method"]).upper(), _target(found["path"], found["query"])
        else:
            raise BadLine("no method and path (or request line)")
        return Record(at, precise, method, target, _int(found["status"]), _int(found["size"]))

    return read


def _target(path: Any, query: Any) -> str:
    target = str(path)
    if "://" in target or not target.startswith("/"):
        _, target = request_line(f"GET {target}")
    if query and "?" not in target:
        target += "?" + str(query).lstrip("?")
    return target


def json_time(value: Any) -> tuple[float, bool]:
    """A JSON log's time: Unix seconds (a number, or digits), ISO 8601, or Apache's
    "10/Oct/2000:13:55:36 -0700"; precise when it holds a fraction of a second."""
    if isinstance(value, bool) or value is None:
        raise BadLine("no time")
    if isinstance(value, int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value)):
        number = float(value)
        return number, not number.is_integer()
    text = str(value).strip("[]")
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        try:
            when = datetime.strptime(text, "%d/%b/%Y:%H:%M:%S %z")
        except ValueError:
            raise BadLine(f"time {text[:40]!r} not understood") from None
    if when.tzinfo is None:
        raise BadLine(f"time {text[:40]!r} has no zone")
    return when.timestamp(), when.microsecond != 0


_NUMBER = re.compile(r"\d+(\.\d+)?")


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def detect(lines: Iterable[str]) -> str:
    """The named format that reads the most of `lines` (JSON, combined, common); UsageError
    when none reads any."""
    sample = [line for line in lines if line.strip()][:50]
    best, read = "", 0
    for name in ("json", "combined", "common"):
        parse = reader(name)
        n = 0
        for line in sample:
            try:
                parse(line)
                n += 1
            except BadLine:
                pass
        if n > read:
            best, read = name, n
    if not best:
        raise UsageError(
            "no line of the log's first ones is JSON, combined or common: name its format"
        )
    return best
