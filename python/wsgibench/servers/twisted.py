"""Twisted Web's WSGIResource: reactor for I/O, the app in the reactor's thread pool."""

from ._recipe import Flavour, launch_script, PythonEnv, ServerRecipe

ENV = PythonEnv("twisted", ("twisted==26.10.0",))


RECIPES = [
    ServerRecipe(
        name="twisted-wsgi", project="Twisted", flavour=Flavour.CALLBACK, env=ENV,
        version_of="twisted", launch=launch_script("serve_twisted"), multi_worker=False,
        handles=("own launcher instead of twistd: Site logs every request",
                 "listen socket made by the launcher: backlog and TCP_NODELAY"),
        summary="reactor + WSGIResource on the reactor thread pool (10 threads), one process",
    ),
]
