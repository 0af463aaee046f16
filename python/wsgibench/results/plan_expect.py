"""A request kind's `expect` in the engine plan (docs/engine-protocol.md): what a valid reply is.

`Expect` is frozen and hashable; `to_dict` writes exactly the JSON the engine reads and `from_dict`
reads a stored one back to the same `Expect`. The engine checks the combinations (at most one of
`body`, `body_len`, `body_sha256`, `body_float`; the others combine with it and each other)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wsgibench.results import json_fields as jf

_BODY_CHECKS = ("body", "body_len", "body_sha256")
_TEXT_CHECKS = ("body_contains", "content_type")
_KEYS = frozenset({"status", *_BODY_CHECKS, "body_float", *_TEXT_CHECKS, "json"})

JsonValue = str | int | float | bool


def is_json_value(value: Any) -> bool:
    """A value a `json` check may expect at a path: a string, a number or a boolean."""
    return isinstance(value, (str, int, float, bool))


def _json_checks(d: Mapping[str, Any]) -> tuple[tuple[str, JsonValue], ...] | None:
    """`json` read back: (dotted path, value) pairs in the order written, None when absent."""
    if d.get("json") is None:
        return None
    paths = jf.table(d, "json")
    if not paths:
        raise jf.FieldError("json is {}, not a non-empty JSON object")
    for path, value in paths.items():
        if not is_json_value(value):
            raise jf.FieldError(f"json.{path} is {value!r}, not a string, number or boolean")
    return tuple((str(path), value) for path, value in paths.items())


@dataclass(frozen=True, kw_only=True)
class Expect:
    """What a valid reply is: its status, at most one check of its whole body (`body_float`: the
    body is a number within (min, max), either bound None when not given), and any of
    `body_contains` (the body contains this string), `json` ((dotted path, value) pairs: the body
    is JSON holding each value at its path) and `content_type` (the reply's media type)."""

    status: int
    body: str | None = None
    body_len: int | None = None
    body_sha256: str | None = None
    body_float: tuple[float | None, float | None] | None = None
    body_contains: str | None = None
    json: tuple[tuple[str, JsonValue], ...] | None = None
    content_type: str | None = None

    def to_dict(self) -> dict[str, Any]:
        expect: dict[str, Any] = {"status": self.status}
        expect.update((n, getattr(self, n)) for n in _BODY_CHECKS if getattr(self, n) is not None)
        if self.body_float is not None:
            bounds = zip(("min", "max"), self.body_float, strict=True)
            expect["body_float"] = {name: v for name, v in bounds if v is not None}
        if self.body_contains is not None:
            expect["body_contains"] = self.body_contains
        if self.json is not None:
            expect["json"] = dict(self.json)
        if self.content_type is not None:
            expect["content_type"] = self.content_type
        return expect

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Expect:
        jf.only(d, _KEYS, "expect")
        span = jf.table(d, "body_float") if "body_float" in d else None
        return cls(
            status=jf.need(jf.integer(d, "status"), "expect.status"),
            body=jf.text(d, "body"),
            body_len=jf.integer(d, "body_len"),
            body_sha256=jf.text(d, "body_sha256"),
            body_float=None if span is None else (jf.number(span, "min"), jf.number(span, "max")),
            body_contains=jf.text(d, "body_contains"),
            json=_json_checks(d),
            content_type=jf.text(d, "content_type"),
        )
