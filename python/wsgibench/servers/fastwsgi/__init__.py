"""FastWSGI: a libuv + llhttp C server."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

# Its build and its module both use pkg_resources, which setuptools 81 removed.
ENV = PythonEnv(
    "fastwsgi", ("fastwsgi==0.0.9", "setuptools==80.9.0"), build_constraints=("setuptools<81",)
)


RECIPES = [
    ServerRecipe(
        name="fastwsgi",
        project="FastWSGI",
        flavour=Flavour.NATIVE,
        env=ENV,
        version_of="fastwsgi",
        system_packages=("build-essential", "python3-dev"),
        launch=launch_script(here(__file__)),
        handles=(
            "setuptools < 81 to build and to import (pkg_resources)",
            "tcp_nodelay on (off by default)",
            "backlog passed",
        ),
        summary="libuv C server, single-threaded event loop per worker process",
    ),
]
