"""The databases of the `db` app (seed 002): SQLite embedded, PostgreSQL and MariaDB as real servers.

Each backend is one small class behind one interface: start() builds the 1,000,000-row table
`test(id INTEGER PRIMARY KEY, value REAL)` and returns the connection settings for the app
(WSGIBENCH_DB_* variables), version() names what runs, stop() leaves no process behind.

- SQLite: a file built once under WSGIBENCH_HOME/data/ and reused (read-only for the app).
- PostgreSQL and MariaDB: Debian's binaries, a fresh data directory next to the results store, a free
  port on 127.0.0.1, pinned to the server's CPUs, run as the `postgres` / `mysql` user when wsgibench
  runs as root (both refuse root, or should), stopped (then killed, with their process group and
  kill cgroup) afterwards. The table is loaded with the databases' own clients (psql COPY, mariadb
  LOAD DATA LOCAL INFILE) from one seeded TSV file, so wsgibench's own venv needs no driver.

Drivers in the server venvs: the venvs are pinned per server and hold no database driver. The
drivers (DRIVERS, pinned) are installed once per Python minor version into
WSGIBENCH_HOME/app-deps/py3.X/ (`uv pip install --target`, pip as the fallback) and put first on
PYTHONPATH of the server processes of db cells only. psycopg[binary] brings its own libpq; PyMySQL is
pure Python; both are green-friendly under gevent/eventlet monkey-patching. The only other package
put on the path is psycopg's dependency typing-extensions.
"""

from __future__ import annotations

import glob
import grp
import json
import os
import pwd
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from ._errors import EnvironmentProblem, UsageError
from ._isolation import KillGroup
from ._paths import home
from ._process import free_port

ROWS = 1_000_000
DATA_SEED = 2011  # the table's random values are the same on every backend and every machine
DRIVERS = ("psycopg[binary]==3.3.9", "PyMySQL==1.2.4")
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

    def info(self) -> dict:
        return {"kind": self.kind, "version": self.version(), "rows": self.rows,
                "load_s": None if self.load_s is None else round(self.load_s, 2)}


class SQLite(Database):
    kind = "sqlite"
    package = "python3 (sqlite3 module)"

    def path(self) -> Path:
        return data_dir() / f"sqlite-test-{ROWS}-seed{DATA_SEED}.sqlite"

    def start(self) -> dict[str, str]:
        path = self.path()
        if not path.exists():
            started = time.monotonic()
            tsv = table_tsv()
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.unlink(missing_ok=True)
            db = sqlite3.connect(tmp)
            db.execute("CREATE TABLE test(id INTEGER PRIMARY KEY, value REAL)")
            with tsv.open() as rows:
                db.executemany("INSERT INTO test VALUES (?, ?)",
                               (line.split("\t") for line in rows))
            db.commit()
            db.close()
            tmp.chmod(0o644)  # php-fpm's www-data reads it too
            tmp.replace(path)
            self.load_s = time.monotonic() - started
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.rows = db.execute("SELECT count(*) FROM test").fetchone()[0]
        db.close()
        self._version = f"SQLite {sqlite3.sqlite_version}"
        return {"WSGIBENCH_DB_KIND": "sqlite", "WSGIBENCH_DB_PATH": str(path)}


class _ServerDatabase(Database):
    """A database server process started by wsgibench: data dir, user, pinning, stop."""

    user = ""  # the account it runs as when wsgibench is root

    def __init__(self, root: Path, cpus: list[int] | None = None):
        super().__init__(root, cpus)
        self.datadir: Path | None = None
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.group = KillGroup(None)
        self._log = None

    # -- helpers -----------------------------------------------------------------------------
    def _account(self) -> tuple[int, int] | None:
        if os.geteuid() != 0:
            return None
        try:
            entry = pwd.getpwnam(self.user)
        except KeyError:
            raise EnvironmentProblem(f"{self.kind}: no `{self.user}` user to run it as: "
                                     f"apt-get install --reinstall {self.package}") from None
        return entry.pw_uid, entry.pw_gid

    def _make_datadir(self) -> Path:
        """A fresh dir next to the results store, if the database's user can reach it; else in /tmp."""
        account = self._account()
        name = f"wsgibench-db-{self.kind}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.root.mkdir(parents=True, exist_ok=True)
        base = self.root if account is None or _reachable(self.root, *account) else \
            Path(tempfile.gettempdir())
        path = base / name
        path.mkdir(mode=0o700)
        if account:
            os.chown(path, *account)
        return path

    def _preexec(self, account: tuple[int, int] | None):
        cpus, group = self.cpus, self.group

        def run() -> None:
            if cpus:
                os.sched_setaffinity(0, cpus)
            group.join_self()
            if account:
                uid, gid = account
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)

        return run

    def _run_as(self, argv: list[str], what: str, **kw) -> str:
        account = self._account()
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=self.datadir,
                              preexec_fn=self._preexec(account), **kw)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"]
            raise EnvironmentProblem(f"{self.kind}: {what} failed: {tail[0][:300]}")
        return proc.stdout

    def _spawn(self, argv: list[str]) -> None:
        self.group = KillGroup.create()
        assert self.datadir is not None
        self._log = (self.datadir.parent / f"{self.datadir.name}.log").open("wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, cwd=self.datadir,
                                     start_new_session=True,
                                     preexec_fn=self._preexec(self._account()))

    def _wait_ready(self, ready) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise EnvironmentProblem(f"{self.kind} exited with code {self.proc.returncode}: "
                                         f"{self._log_tail()}")
            if ready():
                return
            time.sleep(0.2)
        raise EnvironmentProblem(f"{self.kind} did not accept connections within "
                                 f"{READY_TIMEOUT_S:.0f} s: {self._log_tail()}")

    def _log_tail(self) -> str:
        if self.datadir is None:
            return ""
        try:
            lines = (self.datadir.parent / f"{self.datadir.name}.log").read_text(
                errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(l.strip()[:200] for l in lines[-3:])

    def start(self) -> dict[str, str]:
        self.check()
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> dict[str, str]:
        raise NotImplementedError

    def _term_signal(self) -> int:
        return signal.SIGTERM

    def stop(self) -> None:
        if self.proc is not None:
            _signal_group(self.proc.pid, self._term_signal())
            try:
                self.proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(self.proc.pid, signal.SIGKILL)
            self.group.kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self.group.remove()
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.datadir is not None:
            shutil.rmtree(self.datadir, ignore_errors=True)
            (self.datadir.parent / f"{self.datadir.name}.log").unlink(missing_ok=True)
            self.datadir = None

    def pids(self) -> list[int]:
        if self.proc is None:
            return []
        import psutil

        try:
            root = psutil.Process(self.proc.pid)
            found = {root.pid, *(c.pid for c in root.children(recursive=True))}
        except psutil.NoSuchProcess:
            found = set()
        return sorted(found | set(self.group.pids()))


class PostgreSQL(_ServerDatabase):
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

    def _psql(self, sql: str, db: str = "postgres", **kw) -> str:
        bindir = self.bindir()
        assert bindir is not None
        proc = subprocess.run(
            [str(bindir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "bench", "-d", db,
             "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            capture_output=True, text=True, **kw)
        if proc.returncode != 0:
            raise EnvironmentProblem(f"postgresql: `{sql[:60]}` failed: {proc.stderr.strip()[:300]}")
        return proc.stdout.strip()

    def _start(self) -> dict[str, str]:
        bindir = self.bindir()
        assert bindir is not None
        self.datadir = self._make_datadir()
        pgdata = self.datadir / "pgdata"
        self._run_as([str(bindir / "initdb"), "-D", str(pgdata), "-U", "bench", "--auth=trust",
                      "-E", "UTF8", "--locale=C", "--no-sync"], "initdb")
        self.port = free_port()
        self._spawn([
            str(bindir / "postgres"), "-D", str(pgdata), "-p", str(self.port),
            "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
            # Concurrency 100 on a greenlet server opens up to 100 connections.
            "-c", "max_connections=300",
            # A throwaway database read by the benchmark: no durability needed while loading.
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
        ])
        isready = [str(bindir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        self._wait_ready(lambda: subprocess.run(isready).returncode == 0)
        self._psql("CREATE DATABASE bench")
        started = time.monotonic()
        self._psql("CREATE TABLE test(id INTEGER PRIMARY KEY, value REAL)", "bench")
        with table_tsv().open("rb") as rows:
            self._psql("COPY test FROM STDIN", "bench", stdin=rows)
        self._psql("VACUUM ANALYZE test", "bench")
        self.load_s = time.monotonic() - started
        self.rows = int(self._psql("SELECT count(*) FROM test", "bench"))
        self._version = "PostgreSQL " + self._psql("SHOW server_version")
        return {"WSGIBENCH_DB_KIND": "postgresql", "WSGIBENCH_DB_HOST": "127.0.0.1",
                "WSGIBENCH_DB_PORT": str(self.port), "WSGIBENCH_DB_USER": "bench",
                "WSGIBENCH_DB_PASSWORD": "", "WSGIBENCH_DB_NAME": "bench"}

    def _term_signal(self) -> int:
        return signal.SIGINT  # postgres' "fast shutdown": ends the sessions, exits at once


class MariaDB(_ServerDatabase):
    kind = "mariadb"
    package = "mariadb-server"
    user = "mysql"
    requirements = DRIVERS

    @staticmethod
    def _binary(name: str) -> str | None:
        return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin")

    def check(self) -> None:
        if not (self._binary("mariadbd") and self._binary("mariadb-install-db")
                and self._binary("mariadb")):
            raise EnvironmentProblem("MariaDB is not installed: apt-get install mariadb-server")

    def _client(self, sql: str, user: str = "root", db: str = "", **kw) -> str:
        assert self.datadir is not None
        argv = [self._binary("mariadb") or "mariadb", "--no-defaults",
                f"--socket={self.datadir / 'mariadb.sock'}", "-u", user, "--batch",
                "--skip-column-names", "--local-infile=1", "-e", sql]
        if db:
            argv.insert(-2, db)
        proc = subprocess.run(argv, capture_output=True, text=True, **kw)
        if proc.returncode != 0:
            raise EnvironmentProblem(f"mariadb: `{sql[:60]}` failed: {proc.stderr.strip()[:300]}")
        return proc.stdout.strip()

    def _start(self) -> dict[str, str]:
        self.datadir = self._make_datadir()
        data = self.datadir / "data"
        account = self._account()
        data.mkdir()
        if account:
            os.chown(data, *account)
        self._run_as([self._binary("mariadb-install-db") or "mariadb-install-db", "--no-defaults",
                      f"--datadir={data}", "--auth-root-authentication-method=normal",
                      "--skip-test-db", "--skip-name-resolve"], "mariadb-install-db")
        self.port = free_port()
        self._spawn([
            self._binary("mariadbd") or "mariadbd", "--no-defaults", f"--datadir={data}",
            f"--socket={self.datadir / 'mariadb.sock'}", f"--port={self.port}",
            "--bind-address=127.0.0.1", f"--pid-file={self.datadir / 'mariadbd.pid'}",
            "--skip-name-resolve", "--max-connections=300", "--local-infile=1",
            # Seed 002: the query cache is off.
            "--query-cache-type=0", "--query-cache-size=0",
            "--innodb-flush-log-at-trx-commit=0", "--skip-log-bin",
        ])
        self._wait_ready(lambda: (self.datadir / "mariadb.sock").exists() and _quiet(
            lambda: self._client("SELECT 1")))
        self._client("CREATE DATABASE bench; CREATE USER 'bench'@'127.0.0.1'; "
                     "GRANT ALL ON bench.* TO 'bench'@'127.0.0.1'")
        started = time.monotonic()
        self._client("CREATE TABLE test(id INTEGER PRIMARY KEY, value REAL)", db="bench")
        tsv = str(table_tsv()).replace("'", "''")
        self._client(f"LOAD DATA LOCAL INFILE '{tsv}' INTO TABLE test (id, value); "
                     "ANALYZE TABLE test", db="bench")
        self.load_s = time.monotonic() - started
        self.rows = int(self._client("SELECT count(*) FROM test", db="bench"))
        self._version = "MariaDB " + self._client("SELECT VERSION()")
        return {"WSGIBENCH_DB_KIND": "mariadb", "WSGIBENCH_DB_HOST": "127.0.0.1",
                "WSGIBENCH_DB_PORT": str(self.port), "WSGIBENCH_DB_USER": "bench",
                "WSGIBENCH_DB_PASSWORD": "", "WSGIBENCH_DB_NAME": "bench"}


KINDS: dict[str, type[Database]] = {c.kind: c for c in (SQLite, PostgreSQL, MariaDB)}


def get_kind(kind: str) -> type[Database]:
    if kind not in KINDS:
        raise UsageError(f"unknown database {kind!r}; databases: {', '.join(KINDS)}")
    return KINDS[kind]


def _quiet(fn) -> bool:
    try:
        fn()
        return True
    except EnvironmentProblem:
        return False


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _reachable(path: Path, uid: int, gid: int) -> bool:
    """Whether uid:gid may traverse every directory down to path (pytest's tmp dirs are 0700)."""
    groups = {gid, *(g.gr_gid for g in grp.getgrall() if pwd.getpwuid(uid).pw_name in g.gr_mem)}
    for p in [path, *path.parents]:
        st = p.stat()
        bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid in groups else 0o001
        if not st.st_mode & bit:
            return False
    return True


# -- drivers for the server venvs (see the module comment) ----------------------------------------

def app_deps(python: Path, requirements: tuple[str, ...] = DRIVERS) -> Path:
    """The directory holding `requirements` for this interpreter's minor version, installed once."""
    from ._envs import _uv, installer_env

    out = subprocess.run([str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=True)
    target = home() / "app-deps" / f"py{out.stdout.strip()}"
    marker = target / "wsgibench-deps.json"
    if marker.exists() and json.loads(marker.read_text()).get("requirements") == list(requirements):
        return target
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    uv = _uv()
    if uv:
        argv = [uv, "pip", "install", "--python", str(python), "--target", str(tmp), *requirements]
    else:
        argv = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--target",
                str(tmp), *requirements]
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

    def env_for(self, python: Path | None) -> dict[str, str]:
        """The app's connection settings, plus the drivers on PYTHONPATH for a Python server."""
        if self.db is None:
            return {}
        env = dict(self.env)
        if self.db.requirements and python is not None:
            deps = str(app_deps(python, self.db.requirements))
            env["PYTHONPATH"] = os.pathsep.join(p for p in (deps, os.environ.get("PYTHONPATH")) if p)
        return env

    def stop(self) -> None:
        if self.db is not None:
            self.db.stop()
        self.db, self.load, self.env = None, None, {}


def preflight(kinds: set[str]) -> None:
    """Fail before the first cell when a study's database is missing."""
    for kind in sorted(kinds):
        get_kind(kind)(Path(".")).check()
