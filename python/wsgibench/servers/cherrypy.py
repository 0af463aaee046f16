"""CherryPy: the app grafted onto CherryPy's tree and served by its engine (cheroot)."""

from .cheroot import ENV
from ._recipe import Flavour, launch_script, ServerRecipe


RECIPES = [
    ServerRecipe(
        name="cherrypy", project="CherryPy", flavour=Flavour.PROCESS, env=ENV,
        version_of="cherrypy", launch=launch_script("serve_cherrypy"), multi_worker=False,
        handles=("server.socket_queue_size = backlog (default 5)",
                 "production environment: no autoreload, no screen or access log"),
        summary="CherryPy engine over cheroot, thread pool (10 threads, or --threads), one process",
    ),
]
