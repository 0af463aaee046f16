"""socketify.py: uWebSockets/uSockets (C/C++) through cffi, with a WSGI adapter."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

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
]
