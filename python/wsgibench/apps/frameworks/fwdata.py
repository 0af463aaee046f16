"""The framework apps' shared data: the plaintext body, the echo limit and the /db rows.

Standard library only. /db reads its 20 rows with a real SQLite query on an in-memory database of
10,000 rows, one per thread (threading.local), created and filled on the thread's first use.
"""

import sqlite3
import threading

HELLO = "Hello, World!"
ECHO_MAX = 1 << 20  # the largest /echo body the apps accept
TABLE_ROWS = 10_000
FIRST_ID, LAST_ID = 1001, 1020
QUERY = "SELECT id, randomNumber FROM world WHERE id BETWEEN ? AND ? ORDER BY id"

_local = threading.local()


def random_number(row_id):
    """The randomNumber stored for row_id: fixed, so every reply can be checked."""
    return (row_id * 7919) % 10_000 + 1


def _connection():
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE TABLE world(id INTEGER PRIMARY KEY, randomNumber INTEGER NOT NULL)")
        conn.executemany(
            "INSERT INTO world(id, randomNumber) VALUES (?, ?)",
            ((i, random_number(i)) for i in range(1, TABLE_ROWS + 1)),
        )
        conn.commit()
        _local.conn = conn
    return conn


def rows():
    """The 20 rows with ids 1001..1020, as [{"id": ..., "randomNumber": ...}, ...]."""
    cursor = _connection().execute(QUERY, (FIRST_ID, LAST_ID))
    return [{"id": i, "randomNumber": n} for i, n in cursor.fetchall()]
