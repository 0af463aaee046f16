"""What every database of the db app shares: the 1,000,000-row table and the Database interface."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from wsgibench.paths import home

ROWS = 1_000_000
DATA_SEED = 2011  # the table's random values are the same on every backend and every machine
DRIVERS = ("psycopg[binary]==3.3.9", "PyMySQL==1.2.4")
# The ASGI db app's drivers, one set for every backend: psycopg's own AsyncConnection, aiomysql
# (on PyMySQL), aiosqlite (SQLite's standard module on a thread).
ASGI_DRIVERS = (*DRIVERS, "aiomysql==0.3.2", "aiosqlite==0.22.1")
READY_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0


def data_dir() -> Path:
    return home() / "data"


def table_tsv() -> Path:
    """id<TAB>value lines for the whole table, written once; values uniform in [0, 1)."""
    path = data_dir() / f"test-{ROWS}-seed{DATA_SEED}.tsv"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        rng = random.Random(DATA_SEED)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("w") as out:
            out.writelines(f"{i}\t{rng.random():.9f}\n" for i in range(1, ROWS + 1))
        tmp.chmod(0o644)
        tmp.replace(path)
    return path


class Database:
    """One backend: start() -> env for the app, version(), stop()."""

    kind = ""
    package = ""  # the Debian package(s) providing it
    requirements: tuple[str, ...] = ()  # drivers the app needs in the server's Python
    asgi_requirements: tuple[str, ...] = ASGI_DRIVERS  # those the ASGI version needs

    def __init__(self, root: Path, cpus: list[int] | None = None):
        self.root = root  # where data directories go: next to the results store
        self.cpus = cpus
        self.load_s: float | None = None  # seconds the table took to load (None: reused)
        self.rows: int | None = None
        self._version: str | None = None

    def check(self) -> None:
        """Raise EnvironmentProblem (one line, naming the package) when the backend is missing."""

    def start(self) -> dict[str, str]:
        raise NotImplementedError

    def version(self) -> str:
        return self._version or "?"

    def stop(self) -> None:
        pass

    def pids(self) -> list[int]:
        """The database's processes (for tests: none may survive stop())."""
        return []

    def info(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "version": self.version(),
            "rows": self.rows,
            "load_s": None if self.load_s is None else round(self.load_s, 2),
        }
