"""MariaDB for the db app: Debian's binaries, a fresh data dir on a free port, loaded with LOAD DATA."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from typing import Any

from wsgibench.databases.base import DRIVERS, table_tsv
from wsgibench.databases.server_process import ServerDatabase, quiet
from wsgibench.errors import EnvironmentProblem
from wsgibench.machine.process import free_port

# Seed 002 ran MySQL 5.5 "basically with the small configuration, InnoDB disabled to save memory"
# on a 128 MB VM: MySQL 5.5's my-small.cnf buffers, InnoDB off and MyISAM the default engine.
# mariadb-install-db needs InnoDB, so only the server runs without it; MariaDB's least
# table_open_cache is 10 (my-small.cnf: 4).
SMALL_CONFIGURATION = (
    "--skip-innodb",
    "--default-storage-engine=MyISAM",
    "--key-buffer-size=16K",
    "--max-allowed-packet=1M",
    "--table-open-cache=10",
    "--sort-buffer-size=64K",
    "--read-buffer-size=256K",
    "--read-rnd-buffer-size=256K",
    "--net-buffer-length=2K",
    "--thread-stack=128K",
)


class MariaDB(ServerDatabase):
    kind = "mariadb"
    package = "mariadb-server"
    user = "mysql"
    requirements = DRIVERS

    @staticmethod
    def _binary(name: str) -> str | None:
        return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin")

    def check(self) -> None:
        if not (
            self._binary("mariadbd")
            and self._binary("mariadb-install-db")
            and self._binary("mariadb")
        ):
            raise EnvironmentProblem("MariaDB is not installed: apt-get install mariadb-server")

    def _client(self, sql: str, user: str = "root", db: str = "", **kw: Any) -> str:
        assert self.datadir is not None
        argv = [
            self._binary("mariadb") or "mariadb",
            "--no-defaults",
            f"--socket={self.datadir / 'mariadb.sock'}",
            "-u",
            user,
            "--batch",
            "--skip-column-names",
            "--local-infile=1",
            "-e",
            sql,
        ]
        if db:
            argv.insert(-2, db)
        proc = subprocess.run(argv, capture_output=True, text=True, **kw)
        if proc.returncode != 0:
            raise EnvironmentProblem(f"mariadb: `{sql[:60]}` failed: {proc.stderr.strip()[:300]}")
        return str(proc.stdout).strip()

    def _start(self) -> dict[str, str]:
        self.datadir = self._make_datadir()
        data = self.datadir / "data"
        account = self._account()
        data.mkdir()
        if account:
            os.chown(data, *account)
        self._run_as(
            [
                self._binary("mariadb-install-db") or "mariadb-install-db",
                "--no-defaults",
                f"--datadir={data}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--skip-name-resolve",
            ],
            "mariadb-install-db",
        )
        self.port = free_port()
        self._spawn(
            [
                self._binary("mariadbd") or "mariadbd",
                "--no-defaults",
                f"--datadir={data}",
                f"--socket={self.datadir / 'mariadb.sock'}",
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                f"--pid-file={self.datadir / 'mariadbd.pid'}",
                "--skip-name-resolve",
                "--max-connections=300",
                "--local-infile=1",
                # Seed 002: the query cache is off.
                "--query-cache-type=0",
                "--query-cache-size=0",
                "--skip-log-bin",
                *SMALL_CONFIGURATION,
            ]
        )
        datadir = self.datadir
        assert datadir is not None
        self._wait_ready(
            lambda: (datadir / "mariadb.sock").exists() and quiet(lambda: self._client("SELECT 1"))
        )
        self._load()
        self._version = self._read_version()
        return self.settings()

    def _read_version(self) -> str:
        """Its version, with what the running server says of InnoDB and its key buffer."""
        version, key_buffer, innodb = self._client(
            "SELECT VERSION(), @@key_buffer_size, IFNULL((SELECT SUPPORT FROM "
            "information_schema.ENGINES WHERE ENGINE = 'InnoDB'), 'NO')"
        ).split("\t")
        state = "off" if innodb in ("NO", "DISABLED") else "on"
        return f"MariaDB {version} (InnoDB {state}, key buffer {int(key_buffer) // 1024} KB)"

    def _load(self) -> None:
        self._client(
            "CREATE DATABASE bench; CREATE USER 'bench'@'127.0.0.1'; "
            "GRANT ALL ON bench.* TO 'bench'@'127.0.0.1'"
        )
        started = time.monotonic()
        # Seed 002 used MyISAM (InnoDB was disabled to save memory on its 128 MB VM): so does the
        # server here (SMALL_CONFIGURATION), and the table says so itself.
        self._client(
            "CREATE TABLE test(id INTEGER PRIMARY KEY, value REAL) ENGINE=MyISAM", db="bench"
        )
        tsv = str(table_tsv()).replace("'", "''")
        self._client(
            f"LOAD DATA LOCAL INFILE '{tsv}' INTO TABLE test (id, value); ANALYZE TABLE test",
            db="bench",
        )
        self.load_s = time.monotonic() - started
        self.rows = int(self._client("SELECT count(*) FROM test", db="bench"))
