"""nginx answering `Pong!` itself: the machine's ceiling, the baseline every chart draws."""

from wsgibench.servers.nginx.config import NGINX, nginx_command
from wsgibench.servers.recipe import Command, Flavour, LaunchContext, ServerRecipe


def _launch(ctx: LaunchContext) -> list[Command]:
    location = 'default_type text/plain;\n            return 200 "Pong!";'
    return [nginx_command(ctx, location, role="server")]


RECIPES = [
    ServerRecipe(
        name="nginx-baseline",
        project="nginx",
        flavour=Flavour.NATIVE,
        binaries=(NGINX,),
        system_packages=("nginx-light",),
        launch=_launch,
        multi_worker=False,
        version=NGINX.version,
        summary="nginx returns Pong! itself (no Python): the ceiling of this machine",
    ),
]
