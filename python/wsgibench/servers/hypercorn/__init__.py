"""Hypercorn: an ASGI server on h11, with asyncio or uvloop workers; started from a launcher so
its keep-alive request limit (1,000 by default) and its extra headers are off."""

from wsgibench.servers.recipe import (
    Flavour,
    Interface,
    PythonEnv,
    ServerRecipe,
    here,
    launch_script,
)

ENV = PythonEnv("hypercorn", ("hypercorn==0.18.0", "uvloop==0.23.0"))
_HANDLES = (
    "keep_alive_max_requests raised: by default a connection closes after 1,000 requests",
    "backlog passed (default 100)",
    "no access log; no server or date header: the WSGI servers' bytes",
)

# TLS: the launcher sets Hypercorn's certfile and keyfile (ALPN offers h2 and HTTP/1.1).
_TLS = ("--certfile", "{cert}", "--keyfile", "{key}")

RECIPES = [
    ServerRecipe(
        name="hypercorn",
        tls_args=_TLS,
        project="Hypercorn",
        flavour=Flavour.CALLBACK,
        interface=Interface.ASGI,
        env=ENV,
        version_of="hypercorn",
        launch=launch_script(here(__file__), "--loop", "asyncio"),
        multi_worker=False,
        # h11 is Hypercorn's only HTTP/1.1 parser: only the loop is a choice to check.
        expects=(("loop", "asyncio"),),
        handles=_HANDLES,
        summary="ASGI on asyncio + h11, one process",
    ),
    ServerRecipe(
        name="hypercorn-uvloop",
        tls_args=_TLS,
        project="Hypercorn",
        flavour=Flavour.CALLBACK,
        interface=Interface.ASGI,
        env=ENV,
        version_of="hypercorn",
        launch=launch_script(here(__file__), "--loop", "uvloop"),
        multi_worker=False,
        expects=(("loop", "uvloop"),),
        handles=_HANDLES,
        summary="ASGI on uvloop + h11, one process",
    ),
    ServerRecipe(
        name="hypercorn-ka-limit",
        tls_args=_TLS,
        project="Hypercorn",
        flavour=Flavour.CALLBACK,
        interface=Interface.ASGI,
        env=ENV,
        version_of="hypercorn",
        launch=launch_script(
            here(__file__), "--loop", "asyncio", "--keep-alive-max-requests", "default"
        ),
        multi_worker=False,
        expects=(("loop", "asyncio"),),
        handles=(
            "keep_alive_max_requests at its default: a connection closes after 1,000 requests "
            "(the diagnosis closes-after-n says so)",
            *_HANDLES[1:],
        ),
        summary="ASGI on asyncio + h11, one process, its keep-alive limit (1,000 requests) kept",
    ),
]
