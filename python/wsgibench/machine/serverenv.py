"""The environment a server starts in: the caller's, less the Python settings that change how fast
or how a server runs (debug modes, allocator and tracing hooks, warnings as errors, -O). A shell
left with PYTHONDEVMODE=1 or PYTHONASYNCIODEBUG=1 would otherwise slow every server several-fold
and nothing in the results would say why; the study's own `app_env` still sets any of them."""

from __future__ import annotations

import os
from collections.abc import Mapping

# What a server does not inherit from the shell wsgibench runs in.
DROPPED = (
    "PYTHONDEVMODE",  # asyncio debug, allocator debug hooks, warnings shown
    "PYTHONASYNCIODEBUG",
    "PYTHONMALLOC",  # "debug" and "malloc" replace pymalloc
    "PYTHONMALLOCSTATS",
    "PYTHONTRACEMALLOC",
    "PYTHONPROFILEIMPORTTIME",
    "PYTHONVERBOSE",
    "PYTHONDEBUG",
    "PYTHONINSPECT",
    "PYTHONWARNINGS",  # "error" turns a server's warnings into exceptions
    "PYTHONOPTIMIZE",  # -O: asserts gone, a server's own checks with them
)


def server_environ(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without DROPPED."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if k not in DROPPED}


def dropped(environ: Mapping[str, str] | None = None) -> list[str]:
    """The DROPPED settings the caller's environment has, as KEY=VALUE."""
    source = os.environ if environ is None else environ
    return [f"{k}={source[k]}" for k in DROPPED if k in source]
