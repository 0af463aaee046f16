"""socketify.py: uWebSockets/uSockets (C/C++) through cffi, with a WSGI adapter and an ASGI one."""

from wsgibench.servers.recipe import (
    Flavour,
    Interface,
    PythonEnv,
    ServerRecipe,
    here,
    launch_script,
)

# The wheel ships a prebuilt libsocketify linked against the system's libuv.
ENV = PythonEnv("socketify", ("socketify==0.0.31",))


RECIPES = [
    ServerRecipe(
        name="socketify",
        project="socketify.py",
        flavour=Flavour.NATIVE,
        env=ENV,
        version_of="socketify",
        system_packages=("libuv1",),
        launch=launch_script(here(__file__)),
        handles=("needs Debian's libuv1 at run time",),
        summary="uWebSockets C++ core, WSGI adapter via cffi; listen backlog fixed by uSockets",
    ),
    ServerRecipe(
        name="socketify-asgi",
        project="socketify.py",
        flavour=Flavour.NATIVE,
        interface=Interface.ASGI,
        env=ENV,
        version_of="socketify",
        system_packages=("libuv1",),
        launch=launch_script(here(__file__, "launch_asgi.py")),
        expects=(("loop", "asyncio"),),
        handles=(
            "needs Debian's libuv1 at run time",
            "websocket=False: HTTP only",
            "lifespan on: the port opens after the app's startup",
        ),
        summary="uWebSockets C++ core, ASGI adapter on an asyncio loop; backlog fixed by uSockets",
    ),
]
