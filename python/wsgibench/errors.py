"""Errors that end a command with one clear line and a documented exit code."""

from __future__ import annotations

# Exit codes (documented in the README):
EXIT_OK = 0
EXIT_FAILURE = 1  # a study ran but something failed (e.g. nothing could be measured)
EXIT_USAGE = 2  # bad input: unknown name, malformed study file, impossible parameters
EXIT_ENVIRONMENT = 3  # missing system package, engine binary, unusable results store
EXIT_INTERRUPTED = 130


class WsgibenchError(Exception):
    exit_code = EXIT_FAILURE


class UsageError(WsgibenchError):
    exit_code = EXIT_USAGE


class EnvironmentProblem(WsgibenchError):
    exit_code = EXIT_ENVIRONMENT


class StartupError(WsgibenchError):
    """A server did not come up answering the exact pong body."""


class EngineError(WsgibenchError):
    exit_code = EXIT_ENVIRONMENT


class LoadHostLost(EngineError):
    """A load host died, stopped reporting or failed during a cell: the cell is invalid."""
