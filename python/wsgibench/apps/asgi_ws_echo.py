"""WebSocket echo as ASGI: /ws accepts and sends every message back as it came (text as text,
bytes as bytes) until the client closes; /wsgibench-runtime accepts, sends one text message
naming the event loop, the server modules on the stack of this connection and the WebSocket
libraries the process imported (the library each server uses, read back, not assumed), and
closes. Any HTTP request is "Pong!"."""

import asyncio
import json
import sys

BODY = b"Pong!"
HEADERS = [(b"content-type", b"text/plain"), (b"content-length", str(len(BODY)).encode())]
RUNTIME_PATH = "/wsgibench-runtime"


# WebSocket libraries a server may have imported to run this connection.
LIBRARIES = ("websockets", "wsproto", "autobahn")


def runtime():
    """The running event loop's class, the modules on the stack of this call, and the WebSocket
    libraries the server process has imported (servers that run the app in a task of its own
    leave theirs off the stack)."""
    loop = asyncio.get_running_loop()
    frames, frame = [], sys._getframe()
    while frame is not None:
        frames.append(frame.f_globals.get("__name__", ""))
        frame = frame.f_back
    return {
        "loop": f"{type(loop).__module__}.{type(loop).__name__}",
        "modules": frames,
        "loaded": [name for name in LIBRARIES if name in sys.modules],
    }


async def lifespan(receive, send):
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def echo(receive, send):
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "websocket.connect":
            await send({"type": "websocket.accept"})
        elif kind == "websocket.receive":
            if message.get("text") is not None:
                await send({"type": "websocket.send", "text": message["text"]})
            else:
                await send({"type": "websocket.send", "bytes": message.get("bytes") or b""})
        elif kind == "websocket.disconnect":
            return


async def tell_runtime(receive, send):
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": json.dumps(runtime())})
    await send({"type": "websocket.close", "code": 1000})


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        return await lifespan(receive, send)
    if scope["type"] == "websocket":
        if scope["path"] == RUNTIME_PATH:
            return await tell_runtime(receive, send)
        return await echo(receive, send)
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})


application = app
