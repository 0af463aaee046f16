"""Tornado: HTTPServer with WSGIContainer (the app runs on the IOLoop thread), and seed 001's own
pair of tornado's native handlers, a blocking time.sleep and an awaited sleep.

The native pair are not WSGI servers: they stand beside the WSGI entries on the sleep and mixed
apps only (other apps' cells are recorded as unavailable), reading the same WSGIBENCH_SLEEP_S.
"""

from wsgibench.servers.recipe import (
    Flavour,
    Interface,
    PythonEnv,
    ServerRecipe,
    here,
    launch_script,
)

ENV = PythonEnv("tornado", ("tornado==6.6.1",))
NATIVE = here(__file__, "launch_native.py")


# The launchers run tornado's HTTPServer on asyncio (asyncio.run), which tornado does from 5.0 on.
SINCE = ">=5"

RECIPES = [
    ServerRecipe(
        name="tornado-wsgi",
        project="Tornado",
        flavour=Flavour.CALLBACK,
        env=ENV,
        version_of="tornado",
        versions=SINCE,
        launch=launch_script(here(__file__)),
        handles=(
            "tornado.access logger disabled (WSGIContainer logs each request)",
            "workers > 1 via tornado.process.fork_processes",
        ),
        summary="HTTPServer + WSGIContainer; a blocking app blocks the IOLoop",
    ),
    ServerRecipe(
        name="tornado-native-sync",
        project="Tornado",
        flavour=Flavour.CALLBACK,
        env=ENV,
        version_of="tornado",
        versions=SINCE,
        interface=Interface.NATIVE,
        native_api="tornado handlers",
        launch=launch_script(NATIVE, "--mode", "sync"),
        apps=("sleep", "mixed"),
        summary="tornado RequestHandler with time.sleep: blocks the IOLoop (seed 001's sync)",
    ),
    ServerRecipe(
        name="tornado-native-async",
        project="Tornado",
        flavour=Flavour.CALLBACK,
        env=ENV,
        version_of="tornado",
        versions=SINCE,
        interface=Interface.NATIVE,
        native_api="tornado handlers",
        launch=launch_script(NATIVE, "--mode", "async"),
        apps=("sleep", "mixed"),
        summary="tornado RequestHandler awaiting asyncio.sleep: the IOLoop keeps serving",
    ),
]
