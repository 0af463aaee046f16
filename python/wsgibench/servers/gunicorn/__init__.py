"""gunicorn with its sync, gthread, gevent and eventlet workers, 3 workers behind nginx, and two
ASGI ways: its own asyncio worker (`--worker-class asgi`, in the pinned 27 and already in 25)
and uvicorn's worker class."""

from collections.abc import Callable

from packaging.version import Version

from wsgibench.servers.nginx.config import NGINX, nginx_proxy
from wsgibench.servers.recipe import (
    Command,
    Flavour,
    Interface,
    LaunchContext,
    PythonEnv,
    ServerRecipe,
)

VERSION = "27.0.1"
# Before release 20 gunicorn imported pkg_resources, which setuptools 81 removed.
ENV = PythonEnv("gunicorn", (f"gunicorn=={VERSION}",), release_needs=(("<20", "setuptools<81"),))
GEVENT_ENV = PythonEnv("gunicorn-gevent", (f"gunicorn=={VERSION}", "gevent==26.9.0"))
# gunicorn 26 dropped the eventlet worker.
EVENTLET_ENV = PythonEnv("gunicorn-eventlet", ("gunicorn==25.0.3", "eventlet==0.41.3"))
# The ASGI worker moved out of uvicorn into its own package (uvicorn-worker).
UVICORN_ENV = PythonEnv(
    "gunicorn-uvicorn",
    (f"gunicorn=={VERSION}", "uvicorn-worker==0.4.0", "uvloop==0.23.0", "httptools==0.9.0"),
)


def _argv(ctx: LaunchContext, worker_class: str, port: int, workers: int, *extra: str) -> list[str]:
    return [
        *_gunicorn(ctx),
        "--bind",
        f"{ctx.host}:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        worker_class,
        "--backlog",
        str(ctx.backlog),
        "--chdir",
        str(ctx.app_cwd),
        # No --access-logfile: gunicorn logs no access lines unless asked to.
        *(["--access-logfile", "-"] if ctx.access_log else []),
        "--log-level",
        "warning",
        *extra,
        ctx.app_ref,
    ]


def _gunicorn(ctx: LaunchContext) -> list[str]:
    """`python -m gunicorn`; before release 20 gunicorn had no __main__, only its script."""
    if ctx.release and Version(ctx.release) < Version("20"):
        return [ctx.env_bin("gunicorn")]
    return [str(ctx.python), "-m", "gunicorn"]


def _simple(worker_class: str, *extra: str) -> Callable[[LaunchContext], list[Command]]:
    def launch(ctx: LaunchContext) -> list[Command]:
        return [Command(_argv(ctx, worker_class, ctx.port, ctx.workers, *extra))]

    return launch


def _gthread(ctx: LaunchContext) -> list[Command]:
    """gthread with 4 threads per worker, or the study's (or a tuning trial's) threads."""
    threads = ctx.threads if ctx.threads_set else 4
    return [Command(_argv(ctx, "gthread", ctx.port, ctx.workers, "--threads", str(threads)))]


def _behind_nginx(ctx: LaunchContext) -> list[Command]:
    backend = Command(_argv(ctx, "sync", ctx.internal_port, 3), listens_on=ctx.internal_port)
    return [backend, nginx_proxy(ctx, f"proxy_pass http://{ctx.host}:{ctx.internal_port};")]


# TLS: gunicorn's own --certfile/--keyfile, in its workers.
_TLS = ("--certfile", "{cert}", "--keyfile", "{key}")

RECIPES = [
    ServerRecipe(
        name="gunicorn-sync",
        tls_args=_TLS,
        project="gunicorn",
        workers_rule="2N+1",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="gunicorn",
        launch=_simple("sync"),
        summary="pre-fork, one request at a time per worker; closes every connection",
    ),
    ServerRecipe(
        name="gunicorn-gthread",
        tls_args=_TLS,
        project="gunicorn",
        workers_rule="2N+1",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="gunicorn",
        launch=_gthread,
        takes_threads=True,
        summary="pre-fork with a thread pool (4 threads, or the study's threads) and keep-alive",
    ),
    ServerRecipe(
        name="gunicorn-gevent",
        project="gunicorn",
        workers_rule="2N+1",
        flavour=Flavour.GREENLET,
        env=GEVENT_ENV,
        version_of="gunicorn",
        launch=_simple("gevent", "--worker-connections", "10000"),
        summary="gevent worker (monkey-patched), keep-alive",
    ),
    ServerRecipe(
        name="gunicorn-eventlet",
        project="gunicorn",
        workers_rule="2N+1",
        flavour=Flavour.GREENLET,
        env=EVENTLET_ENV,
        version_of="gunicorn",
        launch=_simple("eventlet", "--worker-connections", "10000"),
        summary="eventlet worker; needs gunicorn < 26",
        handles=("eventlet worker removed in gunicorn 26: own venv with gunicorn 25",),
    ),
    ServerRecipe(
        name="gunicorn-3w-nginx",
        tls_args=(),
        project="gunicorn",
        workers_rule="2N+1",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="gunicorn",
        binaries=(NGINX,),
        system_packages=("nginx-light",),
        launch=_behind_nginx,
        multi_worker=False,
        summary="seed 000's gunicorn-3w: 3 sync workers behind nginx proxy_pass",
    ),
    ServerRecipe(
        name="gunicorn-uvicorn",
        tls_args=_TLS,
        project="gunicorn",
        workers_rule="2N+1",
        flavour=Flavour.CALLBACK,
        interface=Interface.ASGI,
        env=UVICORN_ENV,
        version_of="gunicorn",
        launch=_simple("uvicorn_worker.UvicornWorker"),
        expects=(("loop", "uvloop"), ("http", "httptools")),
        handles=(
            "uvicorn's worker class for gunicorn, from the uvicorn-worker package",
            "no access log (gunicorn's default); uvicorn's server header kept: its bytes "
            "are measured",
        ),
        summary="pre-fork gunicorn arbiter with uvicorn ASGI workers (uvloop + httptools)",
    ),
    ServerRecipe(
        name="gunicorn-asgi",
        project="gunicorn",
        workers_rule="2N+1",
        flavour=Flavour.CALLBACK,
        interface=Interface.ASGI,
        env=ENV,
        version_of="gunicorn",
        # Its "auto" loop takes uvloop when installed (not in this venv): named.
        launch=_simple("asgi", "--asgi-loop", "asyncio", "--worker-connections", "10000"),
        expects=(("loop", "asyncio"), ("http", "gunicorn")),
        handles=(
            "gunicorn's own ASGI worker (--worker-class asgi): its HTTP parser, an asyncio loop",
            "--asgi-loop asyncio named; lifespan auto (its default), the app answers it",
            "--worker-connections 10000 (default 1000)",
            "no access log (gunicorn's default)",
        ),
        summary="pre-fork gunicorn arbiter with its own asyncio ASGI workers and parser",
    ),
]
