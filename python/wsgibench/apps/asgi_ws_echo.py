"""WebSocket echo as ASGI: /ws accepts and sends every message back as it came (text as text,
bytes as bytes) until the client closes; /wsgibench-runtime accepts, sends one text message
naming the event loop, the server modules on the stack of this connection and the WebSocket
libraries the process imported (the library each server uses, read back, not assumed), and
closes. Any HTTP request is "Pong!"."""

import json
import sys

from asgi_pong import BODY, RUNTIME_PATH, lifespan, reply
from asgi_pong import runtime as pong_runtime

# WebSocket libraries a server may have imported to run this connection.
LIBRARIES = ("websockets", "wsproto", "autobahn")


def runtime():
    """asgi_pong's runtime (the loop, the modules on the stack of this call) and the WebSocket
    libraries the server process has imported (servers that run the app in a task of its own
    leave theirs off the stack)."""
    return {**pong_runtime(), "loaded": [name for name in LIBRARIES if name in sys.modules]}


def outgoing(message):
    """A received message to send as it came: text as text, bytes as bytes."""
    if message.get("text") is not None:
        return {"type": "websocket.send", "text": message["text"]}
    return {"type": "websocket.send", "bytes": message.get("bytes") or b""}


async def echo(receive, send):
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "websocket.connect":
            await send({"type": "websocket.accept"})
        elif kind == "websocket.receive":
            await send(outgoing(message))
        elif kind == "websocket.disconnect":
            return


async def tell_runtime(receive, send):
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": json.dumps(runtime())})
    await send({"type": "websocket.close", "code": 1000})


def websocket_app(handler):
    """An ASGI app whose WebSocket connections go to `handler` (RUNTIME_PATH's to tell_runtime)
    and whose HTTP requests get "Pong!"."""

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            return await lifespan(receive, send)
        if scope["type"] == "websocket":
            if scope["path"] == RUNTIME_PATH:
                return await tell_runtime(receive, send)
            return await handler(receive, send)
        await reply(send, BODY)

    return app


app = application = websocket_app(echo)
