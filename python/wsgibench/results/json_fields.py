"""Typed reads of a JSON object's fields, for documents read back from the store (a plan the engine
echoed): a field of the wrong type, or a required one missing, is a FieldError (a ValueError) that
names it. Numbers are returned as they were written: an int stays an int, so the JSON written
again does not change."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


class FieldError(ValueError):
    """A field of a JSON document is missing, of the wrong type, or not known."""


def typed(
    d: Mapping[str, Any], key: str, kind: type[Any] | tuple[type[Any], ...], what: str
) -> Any:
    """d[key] when it is of `kind` (a flag only where `kind` says so), None when absent or null."""
    value = d.get(key)
    if value is None:
        return None
    flag = kind is bool or (isinstance(kind, tuple) and bool in kind)
    if (isinstance(value, bool) and not flag) or not isinstance(value, kind):
        raise FieldError(f"{key} is {value!r}, not {what}")
    return value


def number(d: Mapping[str, Any], key: str) -> float | None:
    value: float | None = typed(d, key, (int, float), "a number")
    return value


def integer(d: Mapping[str, Any], key: str) -> int | None:
    value: int | None = typed(d, key, int, "an integer")
    return value


def text(d: Mapping[str, Any], key: str) -> str | None:
    value: str | None = typed(d, key, str, "a string")
    return value


def flag(d: Mapping[str, Any], key: str) -> bool | None:
    value: bool | None = typed(d, key, bool, "true or false")
    return value


def flag_or_int(d: Mapping[str, Any], key: str) -> bool | int | None:
    value: bool | int | None = typed(d, key, (bool, int), "a flag or an integer")
    return value


def table(d: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """A JSON object (empty when absent)."""
    value: Mapping[str, Any] | None = typed(d, key, Mapping, "a JSON object")
    return value or {}


def items(
    d: Mapping[str, Any], key: str, read: Callable[[Mapping[str, Any], str], Any]
) -> tuple[Any, ...]:
    """A list, each item read by `read` (empty when absent)."""
    return tuple(need(read({key: item}, key), key) for item in typed(d, key, list, "a list") or ())


def need(value: Any, key: str) -> Any:
    """The value read, which must be there."""
    if value is None:
        raise FieldError(f"{key} is missing")
    return value


def or_default(value: Any, default: Any) -> Any:
    """The value read, or `default` when it is absent."""
    return default if value is None else value


def only(d: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    """Refuse a field that is not known (it would be lost when the document is written again)."""
    unknown = set(d) - known
    if unknown:
        raise FieldError(f"{where} has unknown fields {', '.join(sorted(unknown))}")


def counts(value: Any) -> dict[str, int]:
    """A JSON object of counts (error classes, status codes, reasons) by name; {} when absent."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): int(v or 0) for k, v in value.items()}
