"""bjoern: a libev-based C WSGI server, single-threaded; workers are forked after listen."""

from ._recipe import Command, Flavour, LaunchContext, PythonEnv, ServerRecipe

ENV = PythonEnv("bjoern", ("bjoern==3.2.2",))


def _launch(ctx: LaunchContext) -> list[Command]:
    return [Command(ctx.launcher("serve_bjoern"))]


RECIPES = [
    ServerRecipe(
        name="bjoern", project="bjoern", flavour=Flavour.NATIVE, env=ENV, version_of="bjoern",
        system_packages=("build-essential", "python3-dev", "libev-dev"), launch=_launch,
        handles=("listen socket made by the launcher: study backlog and TCP_NODELAY",),
        summary="libev C server, one request at a time per process, keep-alive",
    ),
]
