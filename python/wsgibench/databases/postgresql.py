"""PostgreSQL for the db app: Debian's binaries, a fresh cluster on a free port, loaded with COPY."""

from __future__ import annotations

import glob
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from wsgibench.databases.base import DRIVERS, table_tsv
from wsgibench.databases.server_process import ServerDatabase
from wsgibench.errors import EnvironmentProblem
from wsgibench.machine.process import free_port


class PostgreSQL(ServerDatabase):
    kind = "postgresql"
    package = "postgresql"
    user = "postgres"
    requirements = DRIVERS

    @staticmethod
    def bindir() -> Path | None:
        found = glob.glob("/usr/lib/postgresql/*/bin/postgres")
        if not found:
            return None
        best = max(found, key=lambda p: int(re.sub(r"\D", "", Path(p).parts[-3]) or 0))
        return Path(best).parent

    def check(self) -> None:
        if self.bindir() is None:
            raise EnvironmentProblem("PostgreSQL is not installed: apt-get install postgresql")

    def _psql(self, sql: str, db: str = "postgres", **kw: Any) -> str:
        bindir = self.bindir()
        assert bindir is not None
        proc = subprocess.run(
            [
                str(bindir / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "bench",
                "-d",
                db,
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            **kw,
        )
        if proc.returncode != 0:
            raise EnvironmentProblem(
                f"postgresql: `{sql[:60]}` failed: {proc.stderr.strip()[:300]}"
            )
        return str(proc.stdout).strip()

    def _start(self) -> dict[str, str]:
        bindir = self.bindir()
        assert bindir is not None
        self.datadir = self._make_datadir()
        pgdata = self.datadir / "pgdata"
        self._run_as(
            [
                str(bindir / "initdb"),
                "-D",
                str(pgdata),
                "-U",
                "bench",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            "initdb",
        )
        self.port = free_port()
        self._spawn(
            [
                str(bindir / "postgres"),
                "-D",
                str(pgdata),
                "-p",
                str(self.port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=",
                # Concurrency 100 on a greenlet server opens up to 100 connections.
                "-c",
                "max_connections=300",
                # A throwaway database read by the benchmark: no durability needed while loading.
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
            ]
        )
        isready = [str(bindir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        self._wait_ready(lambda: subprocess.run(isready).returncode == 0)
        self._load()
        self._version = "PostgreSQL " + self._psql("SHOW server_version")
        return self.settings()

    def _load(self) -> None:
        self._psql("CREATE DATABASE bench")
        started = time.monotonic()
        self._psql("CREATE TABLE test(id INTEGER PRIMARY KEY, value REAL)", "bench")
        with table_tsv().open("rb") as rows:
            self._psql("COPY test FROM STDIN", "bench", stdin=rows)
        self._psql("VACUUM ANALYZE test", "bench")
        self.load_s = time.monotonic() - started
        self.rows = int(self._psql("SELECT count(*) FROM test", "bench"))

    def _term_signal(self) -> int:
        return signal.SIGINT  # postgres' "fast shutdown": ends the sessions, exits at once
