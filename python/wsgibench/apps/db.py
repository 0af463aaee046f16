"""Seed 002's database app: 10 range queries on a 1,000,000-row table, the sum as `'%6f'`.

Every request runs `SELECT value FROM test WHERE id >= r LIMIT 10` ten times with a random r in
[1, 999990] and answers the sum of the 100 values (uniform in [0, 1), so about 50). /ping answers
`Pong!` without touching the database, for readiness checks.

Settings (environment, set by wsgibench's runner from the database it started):
  WSGIBENCH_DB_KIND  sqlite | postgresql | mariadb
  WSGIBENCH_DB_PATH  the SQLite file (opened read-only)
  WSGIBENCH_DB_HOST, _PORT, _USER, _PASSWORD, _NAME  for the two database servers
  WSGIBENCH_DB_CONNECTIONS  thread (default) | process (a study's app_env sets it)

Connections are opened lazily and never inherited by a forked worker (the pid is checked).
- thread: one per thread (threading.local); a monkey-patched greenlet server (gevent, eventlet)
  turns threading.local into a greenlet-local, so each greenlet has its own connection (psycopg
  and PyMySQL then wait on the database cooperatively).
- process: seed 002's one connection per process, shared by every request of the process: a
  request holds it (behind a lock, a greenlet lock under monkey-patching) for its ten queries,
  so the requests of a process take turns on it, as the seed's did on its module-level one.
"""

import os
import random
import threading

KIND = os.environ.get("WSGIBENCH_DB_KIND", "sqlite")
CONNECTIONS = os.environ.get("WSGIBENCH_DB_CONNECTIONS", "thread")
if CONNECTIONS not in ("thread", "process"):
    raise RuntimeError(f"WSGIBENCH_DB_CONNECTIONS must be thread or process, not {CONNECTIONS!r}")
QUERY = "SELECT value FROM test WHERE id >= {} LIMIT 10"
PONG = b"Pong!"

_local = threading.local()
# process mode: this process's connection and its lock, made afresh in each process (pid).
_shared = {"pid": None, "conn": None, "lock": None}
_guard = threading.Lock()


def _connect():
    env = os.environ.get
    if KIND == "sqlite":
        import sqlite3

        path = env("WSGIBENCH_DB_PATH")
        if not path:
            raise RuntimeError("WSGIBENCH_DB_PATH is not set")
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    if KIND == "postgresql":
        import psycopg

        return psycopg.connect(
            host=env("WSGIBENCH_DB_HOST", "127.0.0.1"),
            port=int(env("WSGIBENCH_DB_PORT", "5432")),
            user=env("WSGIBENCH_DB_USER", "bench"),
            password=env("WSGIBENCH_DB_PASSWORD") or None,
            dbname=env("WSGIBENCH_DB_NAME", "bench"),
            autocommit=True,
        )
    if KIND == "mariadb":
        import pymysql

        return pymysql.connect(
            host=env("WSGIBENCH_DB_HOST", "127.0.0.1"),
            port=int(env("WSGIBENCH_DB_PORT", "3306")),
            user=env("WSGIBENCH_DB_USER", "bench"),
            password=env("WSGIBENCH_DB_PASSWORD", ""),
            database=env("WSGIBENCH_DB_NAME", "bench"),
            autocommit=True,
        )
    raise RuntimeError(f"unknown WSGIBENCH_DB_KIND {KIND!r}")


def _connection():
    pid = os.getpid()
    if getattr(_local, "pid", None) != pid:
        _local.conn, _local.pid = _connect(), pid
    return _local.conn


def _queries(conn):
    cur = conn.cursor()
    total = 0.0
    try:
        for _ in range(10):
            # r is an int we made: formatting it in keeps the query identical on the three drivers.
            cur.execute(QUERY.format(random.randint(1, 999990)))
            total += sum(row[0] for row in cur.fetchall())
    finally:
        cur.close()
    return total


def _process_lock():
    with _guard:
        if _shared["pid"] != os.getpid():
            _shared.update(pid=os.getpid(), conn=None, lock=threading.Lock())
        return _shared["lock"]


def _sum():
    if CONNECTIONS == "process":
        with _process_lock():
            if _shared["conn"] is None:
                _shared["conn"] = _connect()
            try:
                return _queries(_shared["conn"])
            except Exception:
                _shared["conn"] = None  # a broken connection is replaced on the next request
                raise
    try:
        return _queries(_connection())
    except Exception:
        _local.pid = None  # a broken connection is replaced on the next request
        raise


def _reply(start_response, body):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


def app(environ, start_response):
    if environ.get("PATH_INFO") == "/ping":
        return _reply(start_response, PONG)
    return _reply(start_response, f"{_sum():6f}".encode())  # printf %6f, as PHP prints


application = app
