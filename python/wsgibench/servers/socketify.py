"""socketify.py: uWebSockets/uSockets (C/C++) through cffi, with a WSGI adapter."""

from ._recipe import Command, Flavour, LaunchContext, PythonEnv, ServerRecipe

# The wheel ships a prebuilt libsocketify linked against the system's libuv.
ENV = PythonEnv("socketify", ("socketify==0.0.31",))


def _launch(ctx: LaunchContext) -> list[Command]:
    return [Command(ctx.launcher("serve_socketify"))]


RECIPES = [
    ServerRecipe(
        name="socketify", project="socketify.py", flavour=Flavour.NATIVE, env=ENV,
        version_of="socketify", system_packages=("libuv1",), launch=_launch,
        handles=("needs Debian's libuv1 at run time",),
        summary="uWebSockets C++ core, WSGI adapter via cffi; listen backlog fixed by uSockets",
    ),
]
