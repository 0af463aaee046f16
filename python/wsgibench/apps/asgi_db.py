"""Seed 002's database app as ASGI: the same 10 range queries and the same `'%6f'` reply as the
WSGI db app (db.py), on async drivers: aiosqlite, psycopg's AsyncConnection, aiomysql.

A pool of WSGIBENCH_DB_POOL connections (default 10) per worker process is opened at lifespan
startup (a failure is reported as lifespan.startup.failed) and closed at shutdown; a request takes
a connection from it and gives it back. /ping answers `Pong!` without touching the database.
Settings: the WSGIBENCH_DB_* of db.py.
"""

import asyncio
import os
import random

from asgi_pong import BODY, RUNTIME_PATH, reply

KIND = os.environ.get("WSGIBENCH_DB_KIND", "sqlite")
QUERY = "SELECT value FROM test WHERE id >= {} LIMIT 10"
POOL_SIZE = int(os.environ.get("WSGIBENCH_DB_POOL", "10"))

_pool = None  # an asyncio.Queue of open connections, filled at startup


async def _connect():
    env = os.environ.get
    if KIND == "sqlite":
        import aiosqlite

        path = env("WSGIBENCH_DB_PATH")
        if not path:
            raise RuntimeError("WSGIBENCH_DB_PATH is not set")
        return await aiosqlite.connect(f"file:{path}?mode=ro", uri=True)
    if KIND == "postgresql":
        import psycopg

        return await psycopg.AsyncConnection.connect(
            host=env("WSGIBENCH_DB_HOST", "127.0.0.1"),
            port=int(env("WSGIBENCH_DB_PORT", "5432")),
            user=env("WSGIBENCH_DB_USER", "bench"),
            password=env("WSGIBENCH_DB_PASSWORD") or None,
            dbname=env("WSGIBENCH_DB_NAME", "bench"),
            autocommit=True,
        )
    if KIND == "mariadb":
        import aiomysql

        return await aiomysql.connect(
            host=env("WSGIBENCH_DB_HOST", "127.0.0.1"),
            port=int(env("WSGIBENCH_DB_PORT", "3306")),
            user=env("WSGIBENCH_DB_USER", "bench"),
            password=env("WSGIBENCH_DB_PASSWORD", ""),
            db=env("WSGIBENCH_DB_NAME", "bench"),
            autocommit=True,
        )
    raise RuntimeError(f"unknown WSGIBENCH_DB_KIND {KIND!r}")


async def _rows(conn, query):
    if KIND == "sqlite":
        return await conn.execute_fetchall(query)
    async with conn.cursor() as cur:  # psycopg and aiomysql cursors alike
        await cur.execute(query)
        return await cur.fetchall()


async def _close(conn):
    closed = conn.close()
    if asyncio.iscoroutine(closed):  # aiosqlite and psycopg await it; aiomysql's is plain
        await closed


async def _open_pool():
    global _pool
    pool = asyncio.Queue()
    for _ in range(POOL_SIZE):
        pool.put_nowait(await _connect())
    _pool = pool


async def _close_pool():
    while _pool is not None and not _pool.empty():
        await _close(_pool.get_nowait())


async def _sum():
    conn = await _pool.get()
    total = 0.0
    try:
        for _ in range(10):
            # r is an int we made: formatting it in keeps the query identical on the three drivers.
            rows = await _rows(conn, QUERY.format(random.randint(1, 999990)))
            total += sum(row[0] for row in rows)
    except Exception:
        await _close(conn)
        conn = await _connect()  # a broken connection is replaced
        raise
    finally:
        _pool.put_nowait(conn)
    return total


async def lifespan(receive, send):
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await _open_pool()
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await _close_pool()
            await send({"type": "lifespan.shutdown.complete"})
            return


def _headers(body):
    return [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        return await lifespan(receive, send)
    path = scope["path"]
    if path == RUNTIME_PATH:
        from asgi_pong import app as pong

        return await pong(scope, receive, send)
    if path == "/ping":
        return await reply(send, BODY)
    body = f"{await _sum():6f}".encode()  # printf %6f, as PHP prints
    await reply(send, body, _headers(body))


application = app
