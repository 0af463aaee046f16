"""Twisted Web's WSGIResource: reactor for I/O, the app in the reactor's thread pool."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

ENV = PythonEnv("twisted", ("twisted==26.10.0",))


RECIPES = [
    ServerRecipe(
        name="twisted-wsgi",
        project="Twisted",
        flavour=Flavour.CALLBACK,
        env=ENV,
        version_of="twisted",
        launch=launch_script(here(__file__)),
        multi_worker=False,
        handles=(
            "own launcher instead of twistd: Site logs every request",
            "listen socket made by the launcher: backlog and TCP_NODELAY",
        ),
        summary="reactor + WSGIResource on the reactor thread pool (10 threads), one process",
    ),
]
