"""The framework apps' shared data: the plaintext body, the echo limit and the /db rows.

Standard library only. /db reads its 20 rows with a real SQLite query on an in-memory database of
10,000 rows, made and filled once per process (shared cache, kept alive by one connection opened
at import); each thread opens its own connection to it on first use. A thread per request (Django's
ASGI handler runs sync views so) costs one connect, not a new database.
"""

import os
import sqlite3
import threading

HELLO = "Hello, World!"
ECHO_MAX = 1 << 20  # the largest /echo body the apps accept
TABLE_ROWS = 10_000
FIRST_ID, LAST_ID = 1001, 1020
QUERY = "SELECT id, randomNumber FROM world WHERE id BETWEEN ? AND ? ORDER BY id"

_local = threading.local()
# One database per process, named after it: forked workers each make their own.
_URI = "file:wsgibench-fwdata-{pid}?mode=memory&cache=shared"
_keeper = None
_made_in = None
_lock = threading.Lock()


def random_number(row_id):
    """The randomNumber stored for row_id: fixed, so every reply can be checked."""
    return (row_id * 7919) % 10_000 + 1


def _database():
    """The process's database, made on first use in this process (after a fork too)."""
    global _keeper, _made_in
    pid = os.getpid()
    with _lock:
        if _made_in != pid:
            _keeper = sqlite3.connect(_URI.format(pid=pid), uri=True, check_same_thread=False)
            _keeper.execute(
                "CREATE TABLE IF NOT EXISTS world"
                "(id INTEGER PRIMARY KEY, randomNumber INTEGER NOT NULL)"
            )
            _keeper.executemany(
                "INSERT OR REPLACE INTO world(id, randomNumber) VALUES (?, ?)",
                ((i, random_number(i)) for i in range(1, TABLE_ROWS + 1)),
            )
            _keeper.commit()
            _made_in = pid
    return _URI.format(pid=pid)


def _connection():
    conn = getattr(_local, "conn", None)
    if conn is None or getattr(_local, "pid", None) != os.getpid():
        conn = sqlite3.connect(_database(), uri=True)
        _local.conn, _local.pid = conn, os.getpid()
    return conn


def rows():
    """The 20 rows with ids 1001..1020, as [{"id": ..., "randomNumber": ...}, ...]."""
    cursor = _connection().execute(QUERY, (FIRST_ID, LAST_ID))
    return [{"id": i, "randomNumber": n} for i, n in cursor.fetchall()]
