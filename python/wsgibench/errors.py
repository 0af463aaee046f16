"""Errors that end a command with one clear line and a documented exit code."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# Exit codes (documented in docs/measurement.md and `wsgibench run --help`):
EXIT_OK = 0
EXIT_FAILURE = 1  # a command ran but failed (a server environment could not be built)
EXIT_USAGE = 2  # bad input: unknown name, malformed study file, impossible parameters
EXIT_ENVIRONMENT = 3  # missing system package, engine binary, unusable results store
# a study ran and measured nothing: no cell has a number, or every server of a load was
# disqualified, unavailable or failed
EXIT_NOTHING_MEASURED = 4
EXIT_INTERRUPTED = 130


class WsgibenchError(Exception):
    exit_code = EXIT_FAILURE


class UsageError(WsgibenchError):
    exit_code = EXIT_USAGE


class EnvironmentProblem(WsgibenchError):
    exit_code = EXIT_ENVIRONMENT


class NothingMeasured(WsgibenchError):
    """A study ran to its end and measured nothing (of a load, or at all)."""

    exit_code = EXIT_NOTHING_MEASURED


class StartupError(WsgibenchError):
    """A server did not come up answering the exact pong body."""


class EngineError(WsgibenchError):
    exit_code = EXIT_ENVIRONMENT


class LoadHostLost(EngineError):
    """A load host died, stopped reporting or failed during a cell: the cell is invalid."""


def no_match(
    what: str, given: str, choices: Iterable[str], where: str, nearest: bool = True
) -> UsageError:
    """A filter that matches nothing, said with the nearest name there ("no server waitres in
    h1.sqlite; did you mean waitress?"), or with the names there when none is near (or when
    the nearest means nothing, as of numbers)."""
    names = list(dict.fromkeys(choices))
    near = difflib.get_close_matches(given, sorted(names), n=1, cutoff=0.6) if nearest else []
    if near:
        hint = f"; did you mean {near[0]}?"
    elif names:
        shown = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
        hint = f" (there: {shown})"
    else:
        hint = f" (it holds no {what})"
    return UsageError(f"no {what} {given} in {where}{hint}")
