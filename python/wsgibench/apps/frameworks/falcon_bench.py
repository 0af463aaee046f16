"""Falcon (WSGI `falcon_bench:app`, ASGI `falcon_bench:asgi_app`): the framework apps' endpoints.

One resource per interface, its responders picked by Falcon's routing with a suffix per path:
text bodies as falcon.MEDIA_TEXT (`text/plain; charset=utf-8`), /json and /db as resp.media
(Falcon's default JSON handler: json.dumps with its `", "` and `": "` separators), /echo answers
the request stream (HTTPContentTooLarge, a 413, past ECHO_MAX). Kept: Falcon's default error
replies (its JSON 404 and 405); no middleware.
"""

import falcon
import falcon.asgi
from fwdata import ECHO_MAX, HELLO, rows

OCTETS = "application/octet-stream"


def _text(resp, text):
    resp.content_type = falcon.MEDIA_TEXT
    resp.text = text


def _echo(resp, body):
    if len(body) > ECHO_MAX:
        raise falcon.HTTPContentTooLarge()
    resp.content_type = OCTETS
    resp.data = body


class Bench:
    """The WSGI responders."""

    def on_get_ping(self, req, resp):
        _text(resp, "Pong!")

    def on_get_plaintext(self, req, resp):
        _text(resp, HELLO)

    def on_get_json(self, req, resp):
        resp.media = {"message": HELLO}

    def on_get_db(self, req, resp):
        resp.media = {"rows": rows()}

    def on_post_echo(self, req, resp):
        _echo(resp, req.bounded_stream.read())


class AsyncBench:
    """The ASGI responders: the same replies from coroutines."""

    async def on_get_ping(self, req, resp):
        _text(resp, "Pong!")

    async def on_get_plaintext(self, req, resp):
        _text(resp, HELLO)

    async def on_get_json(self, req, resp):
        resp.media = {"message": HELLO}

    async def on_get_db(self, req, resp):
        resp.media = {"rows": rows()}

    async def on_post_echo(self, req, resp):
        _echo(resp, await req.stream.read())


def _routed(bench_app, resource):
    for name in ("ping", "plaintext", "json", "db", "echo"):
        bench_app.add_route(f"/{name}", resource, suffix=name)
    return bench_app


app = _routed(falcon.App(), Bench())
asgi_app = _routed(falcon.asgi.App(), AsyncBench())
application = app
