"""Seed 001's slow handler, and its fast neighbour: /, /slow sleep WSGIBENCH_SLEEP_S (default 1 s)
with time.sleep (cooperative under a monkey-patching greenlet server), /fast and /ping answer at
once. The `sleep` and `mixed` apps are this one module with different request mixes."""

import os
import time

SLEEP_S = float(os.environ.get("WSGIBENCH_SLEEP_S", "1"))
PONG = b"Pong!"
SLEPT = b"Slept"
FAST_PATHS = ("/ping", "/fast")


def app(environ, start_response):
    if environ.get("PATH_INFO") in FAST_PATHS:
        body = PONG
    else:
        time.sleep(SLEEP_S)
        body = SLEPT
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


application = app
