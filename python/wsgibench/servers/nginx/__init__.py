"""nginx answering `Pong!` itself: the machine's ceiling, the baseline every chart draws."""

from wsgibench.baseline import BASELINE
from wsgibench.servers.nginx.config import NGINX, nginx_command
from wsgibench.servers.recipe import Command, Flavour, LaunchContext, ServerRecipe


def _launch(ctx: LaunchContext) -> list[Command]:
    location = 'default_type text/plain;\n            return 200 "Pong!";'
    # One worker per server CPU (the study's layout), so the ceiling is the servers' machine share.
    return [nginx_command(ctx, location, role="server", workers=ctx.workers)]


RECIPES = [
    ServerRecipe(
        name=BASELINE,
        tls_args=(),
        project="nginx",
        flavour=Flavour.NATIVE,
        binaries=(NGINX,),
        system_packages=("nginx-light",),
        launch=_launch,
        workers_follow_cpus=True,
        no_python_app="none",
        version=NGINX.version,
        summary="nginx returns Pong! itself (no Python): the ceiling of this machine",
    ),
]
