"""FastPySGI: FastWSGI's successor by its author, a libuv + llhttp C server serving WSGI or ASGI
apps (one asyncio loop per worker for ASGI), one folder for both."""

from wsgibench.servers.recipe import (
    Flavour,
    Interface,
    PythonEnv,
    ServerRecipe,
    here,
    launch_script,
)

ENV = PythonEnv("fastpysgi", ("fastpysgi==0.6",))
_HANDLES = (
    "tcp_nodelay on (off by default)",
    "backlog passed (default 2048)",
    "no access log at its default log level; its Server and Date headers kept, bytes measured",
)

RECIPES = [
    ServerRecipe(
        name="fastpysgi",
        project="FastPySGI",
        flavour=Flavour.NATIVE,
        env=ENV,
        version_of="fastpysgi",
        launch=launch_script(here(__file__), "--interface", "wsgi"),
        handles=_HANDLES,
        summary="libuv C server, the WSGI app on its event loop thread, worker processes",
    ),
    ServerRecipe(
        name="fastpysgi-asgi",
        project="FastPySGI",
        flavour=Flavour.NATIVE,
        interface=Interface.ASGI,
        env=ENV,
        version_of="fastpysgi",
        launch=launch_script(here(__file__), "--interface", "asgi"),
        expects=(("loop", "asyncio"),),
        # Kept whole, so that pinning a release that holds up is the only change to make.
        unavailable=(
            "fastpysgi 0.6's ASGI mode segfaults (exit -11) within the first second of a closed "
            "loop at 4 keep-alive connections, with or without lifespan (1 connection is served; "
            "its WSGI mode holds up)"
        ),
        handles=(*_HANDLES, "lifespan on, a failed startup fatal"),
        summary="libuv C server driving an asyncio loop for the ASGI app, worker processes",
    ),
]
