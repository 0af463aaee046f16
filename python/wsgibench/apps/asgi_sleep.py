"""Seed 001's slow handler as ASGI: /, /slow wait WSGIBENCH_SLEEP_S (default 1 s) with an awaited
asyncio.sleep (the loop goes on serving), or with time.sleep when WSGIBENCH_SLEEP_BLOCKING=1 (the
loop stops); /fast and /ping answer at once. Same bodies and headers as the WSGI sleep app."""

import asyncio
import os
import time

from asgi_pong import RUNTIME_PATH, lifespan, reply

SLEEP_S = float(os.environ.get("WSGIBENCH_SLEEP_S", "1"))
BLOCKING = os.environ.get("WSGIBENCH_SLEEP_BLOCKING", "0") == "1"
FAST_PATHS = ("/ping", "/fast")


def _headers(body):
    return [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        return await lifespan(receive, send)
    path = scope["path"]
    if path == RUNTIME_PATH:
        from asgi_pong import app as pong

        return await pong(scope, receive, send)
    if path in FAST_PATHS:
        body = b"Pong!"
    else:
        if BLOCKING:
            time.sleep(SLEEP_S)
        else:
            await asyncio.sleep(SLEEP_S)
        body = b"Slept"
    await reply(send, body, _headers(body))


application = app
