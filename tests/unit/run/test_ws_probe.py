"""The WebSocket library a server runs, from what the ws_echo app saw: the stack first, then the
libraries the process imported, else the server's own native code."""

from __future__ import annotations

from wsgibench.run.ws_probe import NATIVE, library_of


def test_the_stack_names_uvicorns_implementation():
    stack = ["asgi_ws_echo", "uvicorn.protocols.websockets.websockets_impl", "asyncio.events"]
    assert library_of(stack, ["websockets"]) == "websockets"
    sansio = ["uvicorn.protocols.websockets.websockets_sansio_impl"]
    assert library_of(sansio, ["websockets"]) == "websockets (sans-I/O)"
    assert library_of(["uvicorn.protocols.websockets.wsproto_impl"], []) == "wsproto"


def test_a_server_that_runs_the_app_in_its_own_task_is_known_by_what_it_imported():
    assert library_of(["asgi_ws_echo", "asyncio.events"], ["wsproto"]) == "wsproto"
    assert library_of(["asgi_ws_echo"], ["autobahn"]) == "autobahn"


def test_nothing_imported_is_the_servers_own_native_code():
    assert library_of(["asgi_ws_echo", "asyncio.events"], []) == NATIVE
