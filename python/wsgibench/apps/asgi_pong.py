"""Seed 000's app as ASGI: the same "Pong!" with the same two headers as the WSGI app, lifespan
handled; /wsgibench-runtime tells which event loop and HTTP parser run it (read, not assumed)."""

import asyncio
import json
import sys

BODY = b"Pong!"
HEADERS = [(b"content-type", b"text/plain"), (b"content-length", str(len(BODY)).encode())]
RUNTIME_PATH = "/wsgibench-runtime"


def runtime():
    """The running event loop's class and the server modules on the stack of this request."""
    loop = asyncio.get_running_loop()
    frames, frame = [], sys._getframe()
    while frame is not None:
        frames.append(frame.f_globals.get("__name__", ""))
        frame = frame.f_back
    return {"loop": f"{type(loop).__module__}.{type(loop).__name__}", "modules": frames}


async def lifespan(receive, send):
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def reply(send, body, headers=HEADERS):
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        return await lifespan(receive, send)
    if scope["path"] == RUNTIME_PATH:
        body = json.dumps(runtime()).encode()
        return await reply(
            send,
            body,
            [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        )
    await reply(send, BODY)


application = app
