"""gevent.pywsgi: greenlet per connection, or (seed 000) handled inside the accept loop."""

from wsgibench.servers.recipe import Flavour, Launch, PythonEnv, ServerRecipe, here, launch_script

ENV = PythonEnv("gevent", ("gevent==26.9.0",))
_HANDLES = (
    "monkey.patch_all() before the app is imported",
    "TCP_NODELAY on the listen socket (pywsgi never sets it: 40 ms per keep-alive reply)",
    "log=None: no access line per request",
)


def _launch(spawn: str) -> Launch:
    return launch_script(here(__file__), "--spawn", spawn)


RECIPES = [
    ServerRecipe(
        name="gevent-pywsgi",
        project="gevent",
        flavour=Flavour.GREENLET,
        env=ENV,
        version_of="gevent",
        launch=_launch("default"),
        multi_worker=False,
        handles=_HANDLES,
        summary="WSGIServer spawning a greenlet per connection, one process",
    ),
    ServerRecipe(
        name="gevent-pywsgi-nospawn",
        project="gevent",
        flavour=Flavour.GREENLET,
        env=ENV,
        version_of="gevent",
        launch=_launch("none"),
        multi_worker=False,
        summary="seed 000's spawn=None: since gevent 1.0 the handler runs in the accept "
        "callback and may not wait, so a connection ends once no request is waiting",
        handles=_HANDLES
        + (
            "TCP_DEFER_ACCEPT: a connection is accepted once its request is "
            "there (else gevent drops it with BlockingSwitchOutError)",
        ),
    ),
    ServerRecipe(
        name="gevent-pywsgi-pool1",
        project="gevent",
        flavour=Flavour.GREENLET,
        env=ENV,
        version_of="gevent",
        launch=_launch("1"),
        multi_worker=False,
        handles=_HANDLES,
        summary="what spawn=None meant before gevent 1.0: one connection at a time (Pool(1))",
    ),
]
