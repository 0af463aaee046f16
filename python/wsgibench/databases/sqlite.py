"""SQLite for the db app: a file built once under WSGIBENCH_HOME/data/ and reused, read-only."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from wsgibench.databases.base import DATA_SEED, ROWS, Database, data_dir, table_tsv


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
                db.executemany(
                    "INSERT INTO test VALUES (?, ?)", (line.split("\t") for line in rows)
                )
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
