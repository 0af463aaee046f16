"""waitress: pure-Python, an I/O thread with a pool of worker threads."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

ENV = PythonEnv("waitress", ("waitress==3.0.2",))


RECIPES = [
    ServerRecipe(
        name="waitress",
        takes_threads=True,
        project="waitress",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="waitress",
        launch=launch_script(here(__file__)),
        multi_worker=False,
        handles=("backlog passed (default 1024)", "'Task queue depth' warnings silenced"),
        summary="asyncore-style I/O thread plus 4 worker threads (or --threads), one process",
    ),
]
