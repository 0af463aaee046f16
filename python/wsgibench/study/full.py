"""A study's [full] size: the keys its seed ran it with (`--full`), checked whether or not it is
asked for, and merged over the shortened study when it is."""

from __future__ import annotations

from typing import Any

from wsgibench.errors import UsageError
from wsgibench.study.keys import STUDY_KEYS
from wsgibench.study.kinds import nearest, read_table
from wsgibench.study.load_keys import LOAD_KEYS


def check_full(full: dict[str, Any] | None, loads: set[str], where: str) -> None:
    """[full] holds study keys (not name, load or full itself) and [full.load.NAME] tables of
    a load's keys, NAME one of the study's loads: checked whether or not --full is given."""
    if full is None:
        return
    top = {k: v for k, v in full.items() if k != "load"}
    for name in ("name", "full"):
        if name in top:
            raise UsageError(f"{where}: full.{name} cannot be changed by the full size")
    read_table(top, STUDY_KEYS, where, "full.")
    by_load = full.get("load", {})
    if not isinstance(by_load, dict) or not all(isinstance(v, dict) for v in by_load.values()):
        raise UsageError(f"{where}: full.load must hold [full.load.NAME] tables")
    for name, table in by_load.items():
        if name not in loads:
            raise UsageError(
                f"{where}: [full.load.{name}] names no load of the study{nearest(name, sorted(loads))}"
            )
        read_table(table, LOAD_KEYS, where, f"full.load.{name}.")


def apply_full(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """The study as its seed ran it at full size: [full] replaces top-level keys, and
    [full.load.NAME] the keys of that load."""
    full = raw.get("full")
    if not isinstance(full, dict):
        raise UsageError(f"--full: {where} has no [full] size: it already runs as its seed did")
    loads = full.get("load", {})
    merged = {**raw, **{k: v for k, v in full.items() if k != "load"}}
    merged["load"] = [{**load, **loads.get(load.get("name"), {})} for load in raw.get("load", [])]
    merged.pop("full")
    return merged
