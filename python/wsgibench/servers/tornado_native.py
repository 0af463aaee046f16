"""Seed 001's own pair: tornado's native handlers, a blocking time.sleep and an awaited sleep.

Not WSGI servers: they stand beside the WSGI entries on the sleep and mixed apps only (other apps'
cells are recorded as unavailable), reading the same WSGIBENCH_SLEEP_S.
"""

from ._recipe import Command, Flavour, LaunchContext, ServerRecipe
from .tornado import ENV


def _launch(mode: str):
    def launch(ctx: LaunchContext) -> list[Command]:
        return [Command(ctx.launcher("serve_tornado_native", "--mode", mode))]

    return launch


RECIPES = [
    ServerRecipe(
        name="tornado-native-sync", project="Tornado", flavour=Flavour.CALLBACK, env=ENV,
        version_of="tornado", launch=_launch("sync"), apps=("sleep", "mixed"),
        summary="tornado RequestHandler with time.sleep: blocks the IOLoop (seed 001's sync)",
    ),
    ServerRecipe(
        name="tornado-native-async", project="Tornado", flavour=Flavour.CALLBACK, env=ENV,
        version_of="tornado", launch=_launch("async"), apps=("sleep", "mixed"),
        summary="tornado RequestHandler awaiting asyncio.sleep: the IOLoop keeps serving",
    ),
]
