"""Seed 000's app: the same "Pong!" for every server, nothing else."""

BODY = b"Pong!"
HEADERS = [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))]


def app(environ, start_response):
    start_response("200 OK", HEADERS)
    return [BODY]


application = app
