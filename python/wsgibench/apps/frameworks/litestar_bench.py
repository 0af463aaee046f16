"""Litestar (ASGI, `litestar_bench:app`): the framework apps' endpoints on Litestar's routing.

/json and /db return dataclasses, serialised by Litestar's msgspec encoder (compact JSON);
/ping and /plaintext return str as MediaType.TEXT (`text/plain; charset=utf-8`); /echo returns
the awaited request body as bytes (Litestar's own 413 past request_max_body_size, set to
ECHO_MAX). The OpenAPI schema routes (/schema) are turned off, so every other path is Litestar's
JSON 404; everything else is Litestar's defaults (no middleware added, no debug mode). Handlers
are `async def`: they run on the event loop, /db's sub-millisecond SQLite query included.
"""

from dataclasses import dataclass

from fwdata import ECHO_MAX, HELLO, rows
from litestar import Litestar, MediaType, Request, get, post


@dataclass
class Message:
    message: str


@dataclass
class World:
    id: int
    randomNumber: int


@dataclass
class Rows:
    rows: list[World]


@get("/ping", media_type=MediaType.TEXT)
async def ping() -> str:
    return "Pong!"


@get("/plaintext", media_type=MediaType.TEXT)
async def plaintext() -> str:
    return HELLO


@get("/json")
async def json_message() -> Message:
    return Message(message=HELLO)


@get("/db")
async def db() -> Rows:
    return Rows(rows=[World(**row) for row in rows()])


@post("/echo", status_code=200, media_type="application/octet-stream")
async def echo(request: Request) -> bytes:
    return await request.body()


app = Litestar(
    route_handlers=[ping, plaintext, json_message, db, echo],
    openapi_config=None,
    request_max_body_size=ECHO_MAX,
)
