"""The results store: SQLite with a versioned schema; a study's cells are committed one by one."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wsgibench.errors import EnvironmentProblem, UsageError, no_match
from wsgibench.results.repeat import Repeat, StoredRepeat
from wsgibench.results.verdict import CellStatus

SCHEMA_VERSION = 1
# Schema history:
#   1 — studies, cells, repeats (engine JSON kept whole), samples.

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS studies (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    started_unix_s REAL NOT NULL,
    finished_unix_s REAL,
    status TEXT NOT NULL,              -- running | finished | interrupted | incomplete
    config_json TEXT NOT NULL,         -- the study as run (TOML parsed, overrides applied)
    environment_json TEXT NOT NULL     -- machine, kernel, sysctls, versions, git commit
);
CREATE TABLE IF NOT EXISTS cells (
    id INTEGER PRIMARY KEY,
    study_id INTEGER NOT NULL REFERENCES studies(id),
    server TEXT NOT NULL,
    load TEXT NOT NULL,
    model TEXT NOT NULL,
    level REAL NOT NULL,               -- connections, rate (1/s), users/s or concurrency
    position INTEGER NOT NULL,         -- order in which cells ran
    status TEXT NOT NULL,              -- measured | disqualified | unavailable | failed
    reason TEXT,
    notes_json TEXT NOT NULL DEFAULT '[]',
    diagnoses_json TEXT NOT NULL DEFAULT '[]',  -- [{code, message, invalid}]
    capabilities_json TEXT,
    server_json TEXT,                  -- recipe, flavour, version, every package in its env
    isolation_json TEXT,               -- cpus, memory limit applied or not
    started_unix_s REAL,
    finished_unix_s REAL,
    UNIQUE (study_id, server, load, level)
);
CREATE TABLE IF NOT EXISTS repeats (
    id INTEGER PRIMARY KEY,
    cell_id INTEGER NOT NULL REFERENCES cells(id),
    idx INTEGER NOT NULL,
    rps_ok REAL,                       -- valid replies per second
    requests INTEGER, ok INTEGER, errors INTEGER,
    error_rate REAL,
    latency_p50_us REAL, latency_p90_us REAL, latency_p99_us REAL, latency_max_us REAL,
    cpu_mean_pct REAL, cpu_peak_pct REAL,   -- server process tree, % of one core
    rss_start_bytes INTEGER, rss_end_bytes INTEGER, rss_peak_bytes INTEGER, rss_mean_bytes INTEGER,
    conns_peak INTEGER,
    engine_cpu_s REAL, sampler_cpu_s REAL,
    saturated INTEGER NOT NULL,
    extra_json TEXT NOT NULL DEFAULT '{}',  -- harness-side counters: netstat deltas, log bytes
    engine_json TEXT NOT NULL,         -- the engine's whole result, histograms included
    UNIQUE (cell_id, idx)
);
CREATE TABLE IF NOT EXISTS samples (
    repeat_id INTEGER NOT NULL REFERENCES repeats(id),
    t_s REAL NOT NULL,
    cpu_pct REAL, rss_bytes INTEGER, processes INTEGER, conns INTEGER,
    load1 REAL                         -- system load average (1 min), once a second
);
CREATE INDEX IF NOT EXISTS samples_by_repeat ON samples(repeat_id);
"""

# Each column of the repeats table and the attribute of a `Repeat` it holds (beside cell_id,
# engine_json: the engine's document as it printed it, and extra_json: `Repeat.extra()`).
REPEAT_COLUMNS: tuple[tuple[str, Callable[[Repeat], Any]], ...] = (
    ("idx", lambda r: r.idx),
    ("rps_ok", lambda r: r.rps_ok),
    ("requests", lambda r: r.requests),
    ("ok", lambda r: r.ok),
    ("errors", lambda r: r.errors),
    ("error_rate", lambda r: r.error_rate),
    ("latency_p50_us", lambda r: r.latency_p50_us),
    ("latency_p90_us", lambda r: r.latency_p90_us),
    ("latency_p99_us", lambda r: r.latency_p99_us),
    ("latency_max_us", lambda r: r.latency_max_us),
    ("cpu_mean_pct", lambda r: r.cpu_mean_pct),
    ("cpu_peak_pct", lambda r: r.cpu_peak_pct),
    ("rss_start_bytes", lambda r: r.rss_start_bytes),
    ("rss_end_bytes", lambda r: r.rss_end_bytes),
    ("rss_peak_bytes", lambda r: r.rss_peak_bytes),
    ("rss_mean_bytes", lambda r: r.rss_mean_bytes),
    ("conns_peak", lambda r: r.conns_peak),
    ("engine_cpu_s", lambda r: r.engine_cpu_s),
    ("sampler_cpu_s", lambda r: r.sampler_cpu_s),
    ("saturated", lambda r: int(r.saturated)),
)


@dataclass
class Cell:
    id: int
    study_id: int
    server: str
    load: str
    model: str
    level: float
    position: int
    status: CellStatus
    reason: str | None
    notes: list[str]
    capabilities: dict[str, Any] | None
    server_info: dict[str, Any] | None
    isolation: dict[str, Any] | None
    diagnoses: list[dict[str, Any]]


class Store:
    """A results store. `read_only` opens it so that nothing can be written, also when the file or
    its folder is not writable (show, export, report and compare open stores this way)."""

    def __init__(self, path: Path, create: bool = True, read_only: bool = False):
        self.path = Path(path)
        self.read_only = read_only
        if not self.path.exists() and (not create or read_only):
            raise EnvironmentProblem(
                f"no results store at {self.path} (a run writes one: `wsgibench run quick` the "
                "default store, `--results PATH` another)"
            )
        try:
            self.db = self._connect()
            self._check_version(create and not read_only)
        except sqlite3.DatabaseError as exc:
            raise EnvironmentProblem(
                f"{self.path} is not a wsgibench results store ({exc})"
            ) from None
        self.db.row_factory = sqlite3.Row

    def _connect(self) -> sqlite3.Connection:
        if not self.read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            return db
        uri = self.path.resolve().as_uri()
        try:
            db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            # A WAL store in a folder we may not write (a read-only copy): read it as immutable.
            return sqlite3.connect(f"{uri}?immutable=1", uri=True)

    def _check_version(self, create: bool) -> None:
        tables = {
            r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if "meta" not in tables:
            if tables:
                raise EnvironmentProblem(f"{self.path} is an SQLite file but not a wsgibench store")
            if not create:
                raise EnvironmentProblem(f"{self.path} holds no study")
            with self.db:
                self.db.executescript(_SCHEMA)
                self.db.execute(
                    "INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
            return
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = row[0] if row else "missing"
        if version != str(SCHEMA_VERSION):
            raise EnvironmentProblem(
                f"{self.path} has results schema version {version}; this wsgibench reads "
                f"version {SCHEMA_VERSION} only"
            )

    def close(self) -> None:
        self.db.close()

    # -- writing -------------------------------------------------------------------------------
    def begin_study(self, name: str, config: dict[str, Any], environment: dict[str, Any]) -> int:
        with self.db:
            cur = self.db.execute(
                "INSERT INTO studies (name, started_unix_s, status, config_json, environment_json)"
                " VALUES (?, ?, 'running', ?, ?)",
                (name, time.time(), json.dumps(config, default=str), json.dumps(environment)),
            )
        return _rowid(cur)

    def latest_study(self, name: str) -> sqlite3.Row | None:
        """The latest run of the study of this name, if any."""
        row: sqlite3.Row | None = self.db.execute(
            "SELECT id, status, config_json FROM studies WHERE name=? ORDER BY id DESC LIMIT 1",
            (name,),
        ).fetchone()
        return row

    def run_before(self, study_id: int, name: str) -> int | None:
        """The id of the run of the study of this name before `study_id`: the latest that
        finished, else the latest (an interrupted run is compared only when no other is)."""
        row = self.db.execute(
            "SELECT id FROM studies WHERE name=? AND id<? "
            "ORDER BY status = 'finished' DESC, id DESC LIMIT 1",
            (name, study_id),
        ).fetchone()
        return int(row[0]) if row else None

    def unfinished_study(self, name: str, config: dict[str, Any]) -> int | None:
        """The latest run of this study that did not finish, if it was run with the same config."""
        row = self.latest_study(name)
        if row is None or row["status"] == "finished":
            return None
        if json.loads(row["config_json"]) != config:
            raise UsageError(
                f"cannot resume study {name!r} (id {row['id']}): it was started with "
                "other settings; run it without --resume, or into another store"
            )
        return int(row["id"])

    def mark_study(self, study_id: int, status: str) -> None:
        with self.db:
            self.db.execute("UPDATE studies SET status=? WHERE id=?", (status, study_id))

    def finish_study(self, study_id: int, status: str = "finished") -> None:
        with self.db:
            self.db.execute(
                "UPDATE studies SET status=?, finished_unix_s=? WHERE id=?",
                (status, time.time(), study_id),
            )

    def delete_cell(self, cell_id: int) -> None:
        """Remove a cell and its repeats (a cell `--resume` runs again)."""
        with self.db:
            self.db.execute(
                "DELETE FROM samples WHERE repeat_id IN (SELECT id FROM repeats WHERE cell_id=?)",
                (cell_id,),
            )
            self.db.execute("DELETE FROM repeats WHERE cell_id=?", (cell_id,))
            self.db.execute("DELETE FROM cells WHERE id=?", (cell_id,))

    def save_cell(self, study_id: int, cell: dict[str, Any], repeats: list[Repeat]) -> int:
        """One transaction per finished cell: a killed run leaves whole cells or none."""
        with self.db:
            cur = self.db.execute(
                "INSERT INTO cells (study_id, server, load, model, level, position, status, reason,"
                " notes_json, diagnoses_json, capabilities_json, server_json, isolation_json,"
                " started_unix_s, finished_unix_s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    study_id,
                    cell["server"],
                    cell["load"],
                    cell["model"],
                    cell["level"],
                    cell["position"],
                    cell["status"],
                    cell.get("reason"),
                    json.dumps(cell.get("notes", [])),
                    json.dumps(cell.get("diagnoses", [])),
                    _dumps(cell.get("capabilities")),
                    _dumps(cell.get("server_info")),
                    _dumps(cell.get("isolation")),
                    cell.get("started_unix_s"),
                    time.time(),
                ),
            )
            cell_id = _rowid(cur)
            for rep in repeats:
                self._save_repeat(cell_id, rep)
        return cell_id

    def _save_repeat(self, cell_id: int, rep: Repeat) -> None:
        columns = ", ".join(column for column, _ in REPEAT_COLUMNS)
        cur = self.db.execute(
            f"INSERT INTO repeats (cell_id, engine_json, extra_json, {columns}) "
            f"VALUES (?, ?, ?, {', '.join('?' for _ in REPEAT_COLUMNS)})",
            (
                cell_id,
                json.dumps(rep.engine.raw),
                json.dumps(rep.extra()),
                *[value(rep) for _, value in REPEAT_COLUMNS],
            ),
        )
        self.db.executemany(
            "INSERT INTO samples (repeat_id, t_s, cpu_pct, rss_bytes, processes, conns, load1)"
            " VALUES (?,?,?,?,?,?,?)",
            [
                (cur.lastrowid, s.t_s, s.cpu_pct, s.rss_bytes, s.processes, s.conns, s.load1)
                for s in rep.samples
            ],
        )

    # -- reading -------------------------------------------------------------------------------
    def studies(self) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM studies ORDER BY id").fetchall()

    def put_meta(self, key: str, value: str) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def meta_values(self, prefix: str) -> list[str]:
        """The values of the meta keys that start with `prefix` (e.g. a tuning's records)."""
        rows = self.db.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
        return [r[1] for r in rows if str(r[0]).startswith(prefix)]

    def study(self, study_id: int | None = None) -> sqlite3.Row:
        row: sqlite3.Row | None
        if study_id is None:
            row = self.db.execute("SELECT * FROM studies ORDER BY id DESC LIMIT 1").fetchone()
        else:
            row = self.db.execute("SELECT * FROM studies WHERE id=?", (study_id,)).fetchone()
        if row is None and study_id is not None:
            ids = [f"{r['id']} ({r['name']})" for r in self.studies()]
            if ids:  # a store with studies, none of this id
                raise no_match("study with id", str(study_id), ids, str(self.path))
        if row is None:
            raise EnvironmentProblem(
                f"{self.path} holds no study" + (f" with id {study_id}" if study_id else "")
            )
        return row

    def cells(self, study_id: int) -> list[Cell]:
        rows = self.db.execute(
            "SELECT * FROM cells WHERE study_id=? ORDER BY position", (study_id,)
        )
        return [
            Cell(
                r["id"],
                r["study_id"],
                r["server"],
                r["load"],
                r["model"],
                r["level"],
                r["position"],
                CellStatus(r["status"]),
                r["reason"],
                json.loads(r["notes_json"]),
                _loads(r["capabilities_json"]),
                _loads(r["server_json"]),
                _loads(r["isolation_json"]),
                json.loads(r["diagnoses_json"]),
            )
            for r in rows
        ]

    def repeats(self, cell_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT * FROM repeats WHERE cell_id=? ORDER BY idx", (cell_id,)
        ).fetchall()

    def samples(self, repeat_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT * FROM samples WHERE repeat_id=? ORDER BY t_s", (repeat_id,)
        ).fetchall()

    def stored_repeats(self, cell_id: int) -> list[StoredRepeat]:
        """A cell's repeats read back typed, each with the most processes the sampler saw in the
        server's tree during it."""
        rows = self.db.execute(
            "SELECT *, (SELECT MAX(processes) FROM samples WHERE repeat_id=repeats.id)"
            " AS processes_peak FROM repeats WHERE cell_id=? ORDER BY idx",
            (cell_id,),
        )
        return [StoredRepeat.from_row(r) for r in rows]


def _rowid(cur: sqlite3.Cursor) -> int:
    assert cur.lastrowid is not None  # set by every INSERT
    return cur.lastrowid


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, default=str)


def _loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)
