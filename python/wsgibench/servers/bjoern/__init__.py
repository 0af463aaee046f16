"""bjoern: a libev-based C WSGI server, single-threaded; workers are forked after listen."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

ENV = PythonEnv("bjoern", ("bjoern==3.2.2",))


RECIPES = [
    ServerRecipe(
        name="bjoern",
        project="bjoern",
        flavour=Flavour.NATIVE,
        env=ENV,
        version_of="bjoern",
        system_packages=("build-essential", "python3-dev", "libev-dev"),
        launch=launch_script(here(__file__)),
        handles=("listen socket made by the launcher: study backlog and TCP_NODELAY",),
        summary="libev C server, one request at a time per process, keep-alive",
    ),
]
