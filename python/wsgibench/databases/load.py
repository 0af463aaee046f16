"""The database of the load in progress, the database kinds by name, and the drivers the db app
needs in a server's Python (installed once per Python minor version, put on PYTHONPATH)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from wsgibench.databases.base import DRIVERS, Database
from wsgibench.databases.mariadb import MariaDB
from wsgibench.databases.postgresql import PostgreSQL
from wsgibench.databases.sqlite import SQLite
from wsgibench.errors import EnvironmentProblem, UsageError
from wsgibench.machine.venvs import installer_env, uv_binary
from wsgibench.paths import home

KINDS: dict[str, type[Database]] = {c.kind: c for c in (SQLite, PostgreSQL, MariaDB)}


def get_kind(kind: str) -> type[Database]:
    if kind not in KINDS:
        raise UsageError(f"unknown database {kind!r}; databases: {', '.join(KINDS)}")
    return KINDS[kind]


def app_deps(python: Path, requirements: tuple[str, ...] = DRIVERS) -> Path:
    """The directory holding `requirements` for this interpreter's minor version, installed once
    (one directory per set: the WSGI and the ASGI db app's drivers live side by side)."""
    out = subprocess.run(
        [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    )
    digest = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:10]
    target = home() / "app-deps" / f"py{out.stdout.strip()}-{digest}"
    marker = target / "wsgibench-deps.json"
    if marker.exists() and json.loads(marker.read_text()).get("requirements") == list(requirements):
        return target
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    uv = uv_binary()
    if uv:
        argv = [uv, "pip", "install", "--python", str(python), "--target", str(tmp), *requirements]
    else:
        argv = [
            str(python),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--target",
            str(tmp),
            *requirements,
        ]
    proc = subprocess.run(argv, capture_output=True, text=True, env=installer_env())
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["?"]
        raise EnvironmentProblem(f"installing the db app's drivers failed: {tail[0][:300]}")
    (tmp / "wsgibench-deps.json").write_text(json.dumps({"requirements": list(requirements)}))
    shutil.rmtree(target, ignore_errors=True)
    tmp.replace(target)
    return target


class LoadDatabase:
    """The database of the load in progress: started at its first cell, stopped after its last.

    The runner calls use() before each cell it runs and stop() when a load ends or the run does."""

    def __init__(self, root: Path):
        self.root = root
        self.load: str | None = None
        self.db: Database | None = None
        self.env: dict[str, str] = {}

    def use(self, load: str, kind: str | None, cpus: list[int] | None) -> Database | None:
        if self.load != load:
            self.stop()
        if kind is None:
            return None
        if self.db is None:
            self.db = get_kind(kind)(self.root, cpus)
            self.load = load
            self.env = self.db.start()
        return self.db

    def env_for(self, python: Path | None, interface: str = "WSGI") -> dict[str, str]:
        """The app's connection settings, plus the drivers on PYTHONPATH for a Python server (the
        async ones for an ASGI server)."""
        if self.db is None:
            return {}
        env = dict(self.env)
        wanted = self.db.asgi_requirements if interface == "ASGI" else self.db.requirements
        if wanted and python is not None:
            deps = str(app_deps(python, wanted))
            env["PYTHONPATH"] = deps  # the shell's does not reach a server (serverenv)
        return env

    def stop(self) -> None:
        if self.db is not None:
            self.db.stop()
        self.db, self.load, self.env = None, None, {}


def preflight(kinds: set[str]) -> None:
    """Fail before the first cell when a study's database is missing."""
    for kind in sorted(kinds):
        get_kind(kind)(Path(".")).check()
