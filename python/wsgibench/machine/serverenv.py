"""The environment a server starts in: the caller's, less the Python settings that change how fast
or how a server runs (debug modes, allocator and tracing hooks, warnings as errors, -O) or which
code it runs (PYTHONPATH, PYTHONHOME, a bytecode prefix). A shell
left with one would otherwise slow every server and nothing in the results would say why: on the
2-CPU VM (2026-11-28, waitress, 50 connections) PYTHONDEVMODE=1 cost 8 %, PYTHONMALLOC=debug 24 %,
PYTHONTRACEMALLOC=1 75 % of the req/s. A study's own `app_env` still sets any of them."""

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
    # Where a server's Python finds its code: the shell's folders would come before the server's
    # pinned packages (a checkout of the server or of one's app's dependencies measured under the
    # recorded versions), another prefix or bytecode folder would leave the venv's compiled files
    # unused. The server's venv, the app's folder and its locked dependencies are what it gets.
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONPYCACHEPREFIX",
    "PYTHONSAFEPATH",
)


def server_environ(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without DROPPED."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if k not in DROPPED}


def dropped(environ: Mapping[str, str] | None = None) -> list[str]:
    """The DROPPED settings the caller's environment has, as KEY=VALUE."""
    source = os.environ if environ is None else environ
    return [f"{k}={source[k]}" for k in DROPPED if k in source]
