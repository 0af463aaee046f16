"""Ask a system binary for its version: run it with a flag and read the number from its banner."""

from __future__ import annotations

import re
import subprocess
from functools import cache


def first_line(argv: list[str]) -> str | None:
    """The first line a command prints (stdout, then stderr), or None when it cannot run."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout + out.stderr).strip()
    return text.splitlines()[0] if text else None


@cache
def _banner_version(argv: tuple[str, ...]) -> str | None:
    line = first_line(list(argv))
    if not line:
        return None
    m = re.search(r"(\d+\.\d+(\.\d+)?)", line)
    return m.group(1) if m else line


def banner_version(argv: list[str]) -> str | None:
    """`nginx -v` -> "1.22.1": the first dotted number of the banner (the line itself if none)."""
    return _banner_version(tuple(argv))
