"""The parity check of a study: its servers may differ in a recipe setting (servers/parity.py) only
where the study's `parity` table says why."""

from __future__ import annotations

from typing import Any

from wsgibench.baseline import BASELINE
from wsgibench.servers import get
from wsgibench.servers.parity import SETTINGS, audited
from wsgibench.servers.recipe import Flavour


def compared(servers: list[str]) -> list[str]:
    """The servers a study compares: not the nginx ceiling, nor a non-Python reference, nor a
    server that cannot run on Python 3 or this system at all (its cells say why, with no number)."""
    return [
        s
        for s in servers
        if s != BASELINE and get(s).flavour != Flavour.REFERENCE and not get(s).unavailable
    ]


def undeclared(servers: list[str], declared: dict[str, Any], access_log: bool = False) -> list[str]:
    """Each setting in which two of the compared servers differ and the study (with its
    `access_log`) does not declare, said with the values; a server not audited is said too
    (nothing can be checked for it)."""
    names = compared(servers)
    out = [f"{s}: not audited (servers/parity.py)" for s in names if audited(s) is None]
    audits = {s: a for s in names if (a := audited(s)) is not None}
    for setting in SETTINGS:
        values = {s: a.value(setting, access_log) for s, a in audits.items()}
        if len(set(values.values())) > 1 and setting not in declared:
            shown = ", ".join(f"{s}: {v}" for s, v in values.items())
            out.append(f"{setting} differs ({shown}) and the study does not declare it")
    out += [f"parity names {k!r}, not a setting ({', '.join(SETTINGS)})" for k in declared
            if k not in SETTINGS]  # fmt: skip
    return out
