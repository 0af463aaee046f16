"""Pong, deliberately slowed by 3 ms of CPU per request (GIL held, so threads cannot hide it): a known
regression for `compare` and `history` tests. WSGIBENCH_BURN_MS sets the milliseconds (a run that
burns 10 % longer is a known 10 % step)."""

import os
import time

BODY = b"Pong!"
HEADERS = [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))]
BURN_CPU_S = float(os.environ.get("WSGIBENCH_BURN_MS", "3")) / 1000


def app(environ, start_response):
    # Thread CPU time, not wall time: the cost per request stays fixed however busy the machine is.
    until = time.thread_time() + BURN_CPU_S
    while time.thread_time() < until:
        pass
    # A list of its own per request, as the seeds' apps wrote it: a server may change the list it
    # is given (bjoern 2.2.3 does, and a shared one then fails every later request).
    start_response("200 OK", list(HEADERS))
    return [BODY]


application = app
