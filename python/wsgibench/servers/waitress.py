"""waitress: pure-Python, an I/O thread with a pool of worker threads."""

from ._recipe import Flavour, launch_script, PythonEnv, ServerRecipe

ENV = PythonEnv("waitress", ("waitress==3.0.2",))


RECIPES = [
    ServerRecipe(
        name="waitress", project="waitress", flavour=Flavour.PROCESS, env=ENV,
        version_of="waitress", launch=launch_script("serve_waitress"), multi_worker=False,
        handles=("backlog passed (default 1024)", "'Task queue depth' warnings silenced"),
        summary="asyncore-style I/O thread plus 4 worker threads (or --threads), one process",
    ),
]
