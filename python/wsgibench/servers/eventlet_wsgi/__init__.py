"""eventlet.wsgi: green thread per connection."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

ENV = PythonEnv("eventlet", ("eventlet==0.41.3",))


RECIPES = [
    ServerRecipe(
        name="eventlet-wsgi",
        project="eventlet",
        flavour=Flavour.GREENLET,
        env=ENV,
        version_of="eventlet",
        launch=launch_script(here(__file__)),
        multi_worker=False,
        handles=(
            "monkey_patch() before the app is imported",
            "log_output=False",
            "TCP_NODELAY on the listen socket",
            "max_size 10000 (default 1024)",
        ),
        summary="eventlet.wsgi.server, green thread per connection, one process",
    ),
]
