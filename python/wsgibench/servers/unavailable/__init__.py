"""Servers of the earlier benchmarks that no install can bring back here; listed with the reason."""

from wsgibench.servers.recipe import Flavour, ServerRecipe

_NOT_ON_PYPI = "no release on PyPI; a Python 2-era project with no Python 3 port"

RECIPES = [
    ServerRecipe(
        name="fapws3",
        project="fapws3",
        flavour=Flavour.NATIVE,
        summary="libev C server with a Python 2 API",
        unavailable="PyPI's only release (0.11.dev sdist) is Python 2 code: no Python 3 release",
    ),
    ServerRecipe(
        name="aspen",
        project="Aspen",
        flavour=Flavour.PROCESS,
        summary="Aspen's old built-in WSGI server",
        unavailable="aspen on PyPI (1.1) is a filesystem router with no HTTP server of its own",
    ),
    ServerRecipe(
        name="magnumpy",
        project="magnum",
        flavour=Flavour.PROCESS,
        summary="pre-fork epoll HTTP server",
        unavailable=_NOT_ON_PYPI,
    ),
    ServerRecipe(
        name="cogen",
        project="cogen",
        flavour=Flavour.CALLBACK,
        summary="generator-coroutine WSGI server",
        unavailable="PyPI's last release (0.2.1) is Python 2 code: no Python 3 release",
    ),
    ServerRecipe(
        name="concurrence",
        project="Concurrence",
        flavour=Flavour.GREENLET,
        summary="tasklet framework on libevent with a WSGI server",
        unavailable=_NOT_ON_PYPI,
    ),
    ServerRecipe(
        name="eurasia",
        project="Eurasia",
        flavour=Flavour.GREENLET,
        summary="Stackless Python tasklet server",
        unavailable=_NOT_ON_PYPI,
    ),
    ServerRecipe(
        name="nginx-unit",
        project="NGINX Unit",
        flavour=Flavour.NATIVE,
        summary="NGINX Unit's Python language module",
        unavailable="not packaged in Debian bookworm (no 'unit' package)",
    ),
]
