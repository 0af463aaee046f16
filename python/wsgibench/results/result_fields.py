"""Numbers read from an engine result document: `MalformedResult` for anything that is not one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class MalformedResult(ValueError):
    """The document is not an engine result of the format this wsgibench reads."""


def read_int(d: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = d.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedResult(f"{key} is {value!r}, not a number")
    return int(value)


def read_float(d: Mapping[str, Any], key: str, default: float | None = None) -> float:
    value = d.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedResult(f"{key} is {value!r}, not a number")
    return float(value)


def optional_int(d: Mapping[str, Any], key: str) -> int | None:
    return None if d.get(key) is None else read_int(d, key)


def optional_float(d: Mapping[str, Any], key: str) -> float | None:
    return None if d.get(key) is None else read_float(d, key)


def read_turnaround(value: Any) -> dict[str, float] | None:
    if not isinstance(value, Mapping):
        return None
    return {str(k): float(v) for k, v in value.items() if isinstance(v, (int, float))}
