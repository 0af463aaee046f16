"""Servers start from compiled bytecode, as they do in production: every environment wsgibench
installs (a server's venv, an app's dependencies) is compiled once, and its marker says so.

Without it a server's start compiles its packages from source each time wherever bytecode is not
written (PYTHONDONTWRITEBYTECODE, a folder the server cannot write) and once otherwise, and the
cell's peak memory carries the compiler's garbage: gunicorn-gthread 49.6 MiB from source against
46.0 from bytecode on the 2-CPU VM (2026-11-28; docs/measurement.md)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

# The marker's key: the environment's bytecode was compiled (by this module or the installer).
COMPILED = "bytecode"
# Markers this process found without the key and tried to compile (once, whatever came of it).
_TRIED: set[Path] = set()


def compile_tree(python: Path | str, folder: Path, log: Path | None = None) -> bool:
    """Compile every module under `folder` with `python` (its own version's bytecode). A file that
    does not compile (a package's Python 2 leftovers) is left as it is, as pip leaves it; False
    when the compiler could not run at all."""
    argv = [str(python), "-m", "compileall", "-q", "-j", "0", str(folder)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        _say(log, f"compileall did not run: {exc}")
        return False
    if proc.returncode != 0:  # some file failed: the rest is compiled
        _say(log, f"compileall: {(proc.stdout + proc.stderr).strip()[-400:]}")
    return True


def ensure_compiled(marker: Path, done: dict[str, Any], python: Path | str, folder: Path) -> None:
    """Compile an environment installed before its marker (read as `done`) said so, once; a folder
    or marker this user cannot write is left as it is (its servers then compile at start, as
    before), and not tried again by this process."""
    if done.get(COMPILED) or marker in _TRIED:
        return
    _TRIED.add(marker)
    writable = os.access(folder, os.W_OK) and os.access(marker, os.W_OK)
    if not writable or not compile_tree(python, folder):
        return
    try:
        marker.write_text(json.dumps({**done, COMPILED: True}))
    except OSError:
        pass


def _say(log: Path | None, line: str) -> None:
    if log is not None:
        with log.open("a") as out:
            out.write(line + "\n")
