"""cheroot: CherryPy's thread-pool HTTP server, used on its own."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

# Shared with the cherrypy entry (cherrypy 18.10 runs on this cheroot).
ENV = PythonEnv("cherrypy", ("cherrypy==18.10.0", "cheroot==11.1.2"))


RECIPES = [
    ServerRecipe(
        name="cheroot",
        takes_threads=True,
        project="cheroot",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="cheroot",
        launch=launch_script(here(__file__)),
        multi_worker=False,
        handles=("request_queue_size = backlog (default 5)",),
        summary="thread pool (10 threads, or --threads), one process",
    ),
]
