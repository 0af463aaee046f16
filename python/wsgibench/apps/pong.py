"""Seed 000's app: the same "Pong!" for every server, nothing else."""

BODY = b"Pong!"
HEADERS = [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))]


def app(environ, start_response):
    # A list of its own per request, as the seeds' apps wrote it: a server may change the list it
    # is given (bjoern 2.2.3 does, and a shared one then fails every later request).
    start_response("200 OK", list(HEADERS))
    return [BODY]


application = app
