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
drivers (DRIVERS, pinned; ASGI_DRIVERS for the ASGI db app: aiosqlite, aiomysql, psycopg's async
connection) are installed once per Python minor version and set into
WSGIBENCH_HOME/app-deps/py3.X-<hash of the set>/ (`uv pip install --target`, pip as the fallback)
and put first on PYTHONPATH of the server processes of db cells only. psycopg[binary] brings its own libpq; PyMySQL is
pure Python; both are green-friendly under gevent/eventlet monkey-patching. The only other package
put on the path is psycopg's dependency typing-extensions.
"""

from __future__ import annotations

from wsgibench.databases.base import DATA_SEED, DRIVERS, ROWS, Database, data_dir, table_tsv
from wsgibench.databases.load import KINDS, LoadDatabase, app_deps, get_kind, preflight
from wsgibench.databases.mariadb import MariaDB
from wsgibench.databases.postgresql import PostgreSQL
from wsgibench.databases.sqlite import SQLite

__all__ = [
    "DATA_SEED",
    "DRIVERS",
    "KINDS",
    "ROWS",
    "Database",
    "LoadDatabase",
    "MariaDB",
    "PostgreSQL",
    "SQLite",
    "app_deps",
    "data_dir",
    "get_kind",
    "preflight",
    "table_tsv",
]
