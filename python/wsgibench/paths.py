"""Where wsgibench keeps server environments, its cache and default results."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
APPS_DIR = PACKAGE_DIR / "apps"
STUDIES_DIR = PACKAGE_DIR / "study" / "builtin"


def home() -> Path:
    """State directory: $WSGIBENCH_HOME; else /var/lib/wsgibench for root, because servers that
    drop privileges (Apache's children, php-fpm, the databases) must read the venvs and data in
    it and root's home is closed to them; else ~/.local/share/wsgibench."""
    env = os.environ.get("WSGIBENCH_HOME")
    if env:
        return Path(env)
    if os.geteuid() == 0:
        return Path("/var/lib/wsgibench")
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "wsgibench"


def envs_dir() -> Path:
    return home() / "envs"


def cache_dir() -> Path:
    """Files wsgibench can make again, kept to save time (the report's JavaScript bundle)."""
    return home() / "cache"


def default_results() -> Path:
    return Path.cwd() / "results" / "wsgibench.sqlite"
