"""FastAPI (ASGI, `fastapi_bench:app`): the framework apps' endpoints on FastAPI's routing.

/json and /db return pydantic models (the route's return type is its response model: FastAPI
validates and serialises it, compact JSON); /ping and /plaintext are PlainTextResponse (Starlette
adds `; charset=utf-8`); /echo answers the awaited request body (413 past ECHO_MAX). The OpenAPI
schema and its /docs and /redoc pages are turned off, so every other path is FastAPI's JSON 404;
everything else is FastAPI's defaults (no middleware added). Handlers are `async def`: they run
on the event loop, /db's sub-millisecond SQLite query included.
"""

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import PlainTextResponse, Response
from fwdata import ECHO_MAX, HELLO, rows
from pydantic import BaseModel


class Message(BaseModel):
    message: str


class World(BaseModel):
    id: int
    randomNumber: int


class Rows(BaseModel):
    rows: list[World]


app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)


@app.get("/ping", response_class=PlainTextResponse)
async def ping():
    return "Pong!"


@app.get("/plaintext", response_class=PlainTextResponse)
async def plaintext():
    return HELLO


@app.get("/json")
async def json_message() -> Message:
    return Message(message=HELLO)


@app.get("/db")
async def db() -> Rows:
    return Rows(rows=rows())


@app.post("/echo")
async def echo(request: Request):
    body = await request.body()
    if len(body) > ECHO_MAX:
        raise HTTPException(status_code=413)
    return Response(body, media_type="application/octet-stream")
