"""Seed 001's fast endpoint stuck behind a slow one: /slow sleeps, /fast (and /ping) answer at once."""

import os
import time

SLEEP_S = float(os.environ.get("WSGIBENCH_SLEEP_S", "1"))
PONG = b"Pong!"
SLEPT = b"Slept"


def _reply(start_response, body):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


def app(environ, start_response):
    if environ.get("PATH_INFO") == "/slow":
        time.sleep(SLEEP_S)
        return _reply(start_response, SLEPT)
    return _reply(start_response, PONG)


application = app
