"""meinheld: a picoev-based C WSGI server with greenlet support."""

from wsgibench.servers.recipe import Flavour, PythonEnv, ServerRecipe, here, launch_script

# meinheld 1.0.2 requires greenlet<0.5, which does not build on current Pythons: install a
# current greenlet and meinheld itself without its dependencies.
ENV = PythonEnv("meinheld", ("greenlet==3.2.4",), no_deps=("meinheld==1.0.2",))


RECIPES = [
    ServerRecipe(
        name="meinheld",
        project="meinheld",
        flavour=Flavour.NATIVE,
        env=ENV,
        version_of="meinheld",
        system_packages=("build-essential", "python3-dev"),
        launch=launch_script(here(__file__)),
        multi_worker=False,
        handles=(
            "greenlet<0.5 pin bypassed: --no-deps with a current greenlet",
            "access log off (on by default)",
            "keep-alive on (off by default): set_keepalive(75)",
            "set_backlog(backlog) before listen()",
        ),
        summary="picoev C server, keep-alive, one process; not monkey-patched",
    ),
    ServerRecipe(
        name="meinheld-site-example",
        project="meinheld",
        flavour=Flavour.NATIVE,
        env=ENV,
        version_of="meinheld",
        system_packages=("build-essential", "python3-dev"),
        launch=launch_script(here(__file__), "--keepalive", "0"),
        multi_worker=False,
        handles=("access log off", "keep-alive left off, as meinheld's site example runs"),
        summary="seed 004's meinheld: its site example, keep-alive off (the default)",
    ),
]
