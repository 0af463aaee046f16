"""The types a study key may have (integer, number, text, flag, list, table, "auto"), each able to
check a value from a TOML file and to describe itself for the reference (docs/studies.md); a `Key`
(name, type, default, unit, words), and `read_table`, which checks a table against its keys."""

from __future__ import annotations

import difflib
import ipaddress
import math
from dataclasses import dataclass
from typing import Any

from wsgibench.errors import UsageError


class Bad(ValueError):
    """A value a kind refuses: the message says what was expected and what was given."""


def shown(value: Any) -> str:
    """A value as the user wrote it, with its TOML type when that is the mistake."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        return f'"{value}" (a string)'
    if isinstance(value, (int, float)):
        return f"{value!r} (a number)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return repr(value)


def nearest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """' (did you mean "x"?)' for the closest of `choices`, or nothing."""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.7)
    return f' (did you mean "{near[0]}"?)' if near else ""


class Kind:
    """Checks one value and says in words what it accepts."""

    def read(self, value: Any) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


def _bounds(low: float | None, above: bool, high: float | None) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if above else '≥'} {low:g}")
    if high is not None:
        parts.append(f"≤ {high:g}")
    return " and ".join(parts)


@dataclass(frozen=True)
class Int(Kind):
    low: int | None = None
    high: int | None = None

    def read(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Bad(f"must be {self.describe()}, not {shown(value)}")
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise Bad(f"must be {self.describe()}, not {value}")
        return value

    def describe(self) -> str:
        bounds = _bounds(self.low, False, self.high)
        return "an integer" + (f" {bounds}" if bounds else "")


@dataclass(frozen=True)
class Number(Kind):
    low: float | None = None
    above: bool = False  # the bound excludes `low` itself
    high: float | None = None

    def read(self, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Bad(f"must be {self.describe()}, not {shown(value)}")
        if not math.isfinite(value):
            raise Bad(f"must be {self.describe()}, not {value}")
        too_low = self.low is not None and (value <= self.low if self.above else value < self.low)
        if too_low or (self.high is not None and value > self.high):
            raise Bad(f"must be {self.describe()}, not {value:g}")
        return float(value)

    def describe(self) -> str:
        bounds = _bounds(self.low, self.above, self.high)
        return "a number" + (f" {bounds}" if bounds else "")


@dataclass(frozen=True)
class Text(Kind):
    choices: tuple[str, ...] = ()
    what: str = "a string"

    def read(self, value: Any) -> str:
        if not isinstance(value, str):
            raise Bad(f"must be {self.describe()}, not {shown(value)}")
        if self.choices and value not in self.choices:
            raise Bad(f'must be {self.describe()}, not "{value}"{nearest(value, self.choices)}')
        return value

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        return self.what


@dataclass(frozen=True)
class Address(Kind):
    """An IP address, as a string."""

    def read(self, value: Any) -> str:
        text = Text(what="an IP address").read(value)
        try:
            ipaddress.ip_address(text)
        except ValueError:
            raise Bad(f"must be an IP address, not {shown(value)}") from None
        return text

    def describe(self) -> str:
        return "an IP address (a string)"


@dataclass(frozen=True)
class Flag(Kind):
    def read(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise Bad(f"must be true or false, not {shown(value)}")
        return value

    def describe(self) -> str:
        return "true or false"


@dataclass(frozen=True)
class Auto(Kind):
    """The string "auto", or a value of another kind."""

    other: Kind

    def read(self, value: Any) -> Any:
        if value == "auto":
            return "auto"
        try:
            return self.other.read(value)
        except Bad:
            raise Bad(f"must be {self.describe()}, not {shown(value)}") from None

    def describe(self) -> str:
        return f'"auto" or {self.other.describe()}'


@dataclass(frozen=True)
class ListOf(Kind):
    item: Kind
    min_len: int = 1

    def read(self, value: Any) -> list[Any]:
        if not isinstance(value, list) or len(value) < self.min_len:
            raise Bad(f"must be {self.describe()}, not {shown(value)}")
        out = []
        for i, item in enumerate(value):
            try:
                out.append(self.item.read(item))
            except Bad as exc:
                raise Bad(f"item {i + 1} {exc}") from None
        return out

    def describe(self) -> str:
        return f"a {'non-empty ' if self.min_len else ''}list of {_plural(self.item.describe())}"


@dataclass(frozen=True)
class OneOrList(Kind):
    """One value of a kind, or a non-empty list of them (read as a list)."""

    item: Kind

    def read(self, value: Any) -> list[Any]:
        if isinstance(value, list):
            return ListOf(self.item).read(value)
        try:
            return [self.item.read(value)]
        except Bad:
            raise Bad(f"must be {self.describe()}, not {shown(value)}") from None

    def describe(self) -> str:
        return f"{self.item.describe()}, or a list of them"


@dataclass(frozen=True)
class TableOf(Kind):
    """A table of name = value, every value of one kind."""

    value: Kind
    names: str = "names"

    def read(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise Bad(f"must be {self.describe()}, not {shown(value)}")
        out = {}
        for k, v in value.items():
            try:
                out[str(k)] = self.value.read(v)
            except Bad as exc:
                raise Bad(f"entry {k!r} {exc}") from None
        return out

    def describe(self) -> str:
        return f"a table of {self.names} = {self.value.describe()}"


def _first_leaf(path: str, value: Any) -> str:
    """The dotted path to the first value under nested tables: TOML's reading of a bare dotted
    key (`rows.19.id = 1`), for a hint to quote it."""
    while isinstance(value, dict) and value:
        key, value = next(iter(value.items()))
        path = f"{path}.{key}"
    return path


@dataclass(frozen=True)
class JsonPaths(Kind):
    """A non-empty table of dotted key paths (`"rows.19.id"`, quoted) = the JSON value expected
    there: a string, a number or a boolean."""

    def read(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise Bad(f"must be {self.describe()}, not {shown(value)}")
        if not value:
            raise Bad(f"must be {self.describe()}, not an empty table")
        for path, v in value.items():
            if "" in str(path).split("."):
                raise Bad(f'path "{path}" has an empty segment (keys joined by single dots)')
            if isinstance(v, dict):
                raise Bad(
                    f'entry "{path}" is a table: quote a dotted path ("{_first_leaf(path, v)}")'
                )
            finite = not isinstance(v, float) or math.isfinite(v)
            if not isinstance(v, (str, int, float, bool)) or not finite:
                raise Bad(f'entry "{path}" must be a string, number or boolean, not {shown(v)}')
        return {str(k): v for k, v in value.items()}

    def describe(self) -> str:
        return 'a table of "dotted.paths" = a string, number or boolean'


@dataclass(frozen=True)
class EnvValue(Kind):
    """An environment variable's value: a string, or a number written as it reads."""

    def read(self, value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise Bad(f"must be a string or a number, not {shown(value)}")
        return str(value)

    def describe(self) -> str:
        return "a string or a number"


@dataclass(frozen=True)
class Section(Kind):
    """A table, or an array of tables, whose keys are listed in a section of their own."""

    title: str
    many: bool = False

    def read(self, value: Any) -> Any:
        ok = (
            isinstance(value, list) and all(isinstance(v, dict) for v in value)
            if self.many
            else isinstance(value, dict)
        )
        if not ok:
            raise Bad(f"must be {self.describe()}, not {shown(value)}")
        return value

    def describe(self) -> str:
        return f"{'an array of tables' if self.many else 'a table'} (see {self.title})"


def _plural(text: str) -> str:
    """'an integer ≥ 0' -> 'integers ≥ 0'; 'a server name' -> 'server names'."""
    for article in ("an ", "a "):
        if text.startswith(article):
            rest = text[len(article) :]
            cut = min(
                (i for i in (rest.find(" ≥"), rest.find(" >"), rest.find(" (")) if i >= 0),
                default=len(rest),
            )
            return f"{rest[:cut]}s{rest[cut:]}"
    return text


@dataclass(frozen=True)
class Key:
    name: str
    kind: Kind
    default: str  # in words, as the reference prints it ("" = required or none)
    doc: str
    unit: str = ""
    example: str = ""
    models: tuple[str, ...] = ()  # [[load]] keys: the models that take it (empty: every model)
    required: tuple[str, ...] = ()  # [[load]] keys: the models that need it

    def read(self, value: Any, where: str, prefix: str = "") -> Any:
        """The checked value; a refused one is a UsageError naming the file and the key."""
        try:
            return self.kind.read(value)
        except Bad as exc:
            raise UsageError(f"{where}: {prefix}{self.name} {exc}") from None


def read_table(
    raw: dict[str, Any], keys: tuple[Key, ...], where: str, prefix: str = ""
) -> dict[str, Any]:
    """Every key of `raw` checked against `keys`: an unknown key is refused with the nearest
    known one; absent keys (and keys set to None by the command line) are left out."""
    known = {k.name: k for k in keys}
    out: dict[str, Any] = {}
    for name, value in raw.items():
        key = known.get(name)
        if key is None:
            hint = nearest(str(name), list(known)) or " (see `wsgibench studies --keys`)"
            raise UsageError(f"{where}: unknown key {prefix}{name}{hint}")
        if value is not None:
            out[name] = key.read(value, where, prefix)
    return out
