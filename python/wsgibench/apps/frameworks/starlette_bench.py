"""Starlette (ASGI, `starlette_bench:app`): the framework apps' endpoints on Starlette's routing.

/ping and /plaintext are PlainTextResponse (`; charset=utf-8` added), /json and /db JSONResponse
(compact JSON), /echo answers the awaited request body (413 past ECHO_MAX). Kept: Starlette's
default middleware stack (its error and exception middleware) and its plain-text 404 and 405.
Handlers are `async def`: they run on the event loop, /db's sub-millisecond SQLite query included.
"""

from fwdata import ECHO_MAX, HELLO, rows
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route


async def ping(request):
    return PlainTextResponse("Pong!")


async def plaintext(request):
    return PlainTextResponse(HELLO)


async def json_message(request):
    return JSONResponse({"message": HELLO})


async def db(request):
    return JSONResponse({"rows": rows()})


async def echo(request):
    body = await request.body()
    if len(body) > ECHO_MAX:
        raise HTTPException(status_code=413)
    return Response(body, media_type="application/octet-stream")


app = Starlette(
    routes=[
        Route("/ping", ping, methods=["GET"]),
        Route("/plaintext", plaintext, methods=["GET"]),
        Route("/json", json_message, methods=["GET"]),
        Route("/db", db, methods=["GET"]),
        Route("/echo", echo, methods=["POST"]),
    ]
)
