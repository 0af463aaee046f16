"""Seed 000's app in RSGI, Granian's own interface: the same "Pong!" with the same two headers as
the WSGI and ASGI apps; /wsgibench-runtime tells which event loop runs it (read, not assumed)."""

import json

from asgi_pong import BODY, RUNTIME_PATH, runtime

HEADERS = [("content-type", "text/plain"), ("content-length", str(len(BODY)))]


async def app(scope, protocol):
    if scope.proto != "http":  # RSGI calls the app for websockets too: none here
        return
    if scope.path == RUNTIME_PATH:
        body = json.dumps(runtime()).encode()
        headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
        return protocol.response_bytes(200, headers, body)
    protocol.response_bytes(200, HEADERS, BODY)


application = app
