"""Request targets grouped into kinds: `/items/17` and `/items/18` are `/items/{id}`, by the
patterns a study names and, unless turned off, by rule (numbers, UUIDs, long hex strings, and
every query value), so that a million distinct URLs stay a readable table."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from wsgibench.errors import UsageError

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{16,}")


@dataclass(frozen=True)
class Pattern:
    """A path pattern such as `/items/{id}/reviews`: each `{name}` one whole path segment."""

    text: str
    regex: re.Pattern[str]

    @classmethod
    def parse(cls, text: str) -> Pattern:
        if not text.startswith("/") or "?" in text:
            raise UsageError(f"path pattern {text!r}: a path starting with / (no query)")
        parts = []
        for segment in text.split("/"):
            m = _PLACEHOLDER.fullmatch(segment)
            if m:
                parts.append("[^/]+")
            elif "{" in segment or "}" in segment:
                raise UsageError(f"path pattern {text!r}: a {{name}} is a whole segment")
            else:
                parts.append(re.escape(segment))
        return cls(text, re.compile("/".join(parts)))


def segment_rule(segment: str) -> str | None:
    """What a path segment is grouped as by rule, or None when it stays as it is."""
    if segment.isdigit():
        return "{id}"
    if _UUID.fullmatch(segment):
        return "{uuid}"
    if _HEX.fullmatch(segment):
        return "{hex}"
    return None


@dataclass
class Grouping:
    """How a target becomes its kind's pattern: the first of `patterns` its path matches, else
    (with `auto`) its segments by rule; with `auto` the query keeps its keys, each value `{}`."""

    patterns: Sequence[Pattern] = ()
    auto: bool = True
    _seen: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, patterns: Sequence[str], auto: bool = True) -> Grouping:
        return cls(tuple(Pattern.parse(p) for p in patterns), auto)

    def group(self, target: str) -> str:
        """The pattern of a target (its path and query)."""
        found = self._seen.get(target)
        if found is None:
            if len(self._seen) >= 65536:  # a log of distinct URLs: the memory stays bounded
                self._seen.clear()
            found = self._seen[target] = self._group(target)
        return found

    def _group(self, target: str) -> str:
        path, sep, query = target.partition("?")
        for p in self.patterns:
            if p.regex.fullmatch(path):
                path = p.text
                break
        else:
            if self.auto:
                path = "/".join(segment_rule(s) or s for s in path.split("/"))
        if not sep:
            return path
        if not self.auto:
            return f"{path}?{query}"
        keys = list(dict.fromkeys(k for k, _ in parse_qsl(query, keep_blank_values=True)))
        return f"{path}?{'&'.join(f'{k}={{}}' for k in keys)}" if keys else path
