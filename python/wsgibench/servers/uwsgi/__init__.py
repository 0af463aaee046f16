"""uWSGI: its HTTP router, the router with keep-alive, the HTTP/1.1 socket (with or without
threads), and behind nginx."""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from wsgibench.servers.nginx.config import NGINX, nginx_proxy
from wsgibench.servers.recipe import Command, Flavour, LaunchContext, PythonEnv, ServerRecipe

VERSION = "2.0.31"
# Built from source against the interpreter wsgibench runs on (needs gcc and Python headers).
ENV = PythonEnv("uwsgi", (f"uwsgi=={VERSION}",))

# nginx's own uwsgi_params, inline so the config does not depend on /etc/nginx.
UWSGI_PARAMS = """
            uwsgi_param QUERY_STRING $query_string;
            uwsgi_param REQUEST_METHOD $request_method;
            uwsgi_param CONTENT_TYPE $content_type;
            uwsgi_param CONTENT_LENGTH $content_length;
            uwsgi_param REQUEST_URI $request_uri;
            uwsgi_param PATH_INFO $document_uri;
            uwsgi_param DOCUMENT_ROOT $document_root;
            uwsgi_param SERVER_PROTOCOL $server_protocol;
            uwsgi_param REQUEST_SCHEME $scheme;
            uwsgi_param REMOTE_ADDR $remote_addr;
            uwsgi_param REMOTE_PORT $remote_port;
            uwsgi_param SERVER_PORT $server_port;
            uwsgi_param SERVER_NAME $server_name;
            uwsgi_param HTTP_HOST $host;"""


def _somaxconn() -> int:
    try:
        return int(Path("/proc/sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        return 128


def _argv(ctx: LaunchContext, *socket: str) -> list[str]:
    argv = [
        ctx.env_bin("uwsgi"),
        *socket,
        "--master",
        # Without it SIGTERM makes the master reload its workers instead of exiting.
        "--die-on-term",
        "--processes",
        str(ctx.workers),
        # uWSGI refuses to start when --listen exceeds net.core.somaxconn.
        "--listen",
        str(min(ctx.backlog, _somaxconn())),
        "--chdir",
        str(ctx.app_cwd),
        "--module",
        ctx.app_ref,
        # Exit instead of answering 500 to everything when the app fails to import.
        "--need-app",
        "--disable-logging",
        "--strict",
    ]
    if ctx.threads > 1:
        argv += ["--threads", str(ctx.threads)]
    return argv


def _http(*extra: str) -> Callable[[LaunchContext], list[Command]]:
    def launch(ctx: LaunchContext) -> list[Command]:
        return [Command(_argv(ctx, "--http", f"{ctx.host}:{ctx.port}", *extra))]

    return launch


def _http11(ctx: LaunchContext) -> list[Command]:
    return [Command(_argv(ctx, "--http11-socket", f"{ctx.host}:{ctx.port}"))]


def _http11_processes_only(ctx: LaunchContext) -> list[Command]:
    """Seed 003's "uWSGIbase" (`--http11 :9808 --processes 5`): never --threads."""
    return _http11(replace(ctx, threads=1))


# Seed 000's -z 30: the uwsgi socket's timeout, 30 s instead of uWSGI's 4.
SOCKET_TIMEOUT_S = 30


def _behind_nginx(ctx: LaunchContext) -> list[Command]:
    backend = Command(
        _argv(
            ctx,
            "--socket",
            f"{ctx.host}:{ctx.internal_port}",
            "--socket-timeout",
            str(SOCKET_TIMEOUT_S),
        ),
        listens_on=ctx.internal_port,
    )
    return [backend, nginx_proxy(ctx, f"uwsgi_pass {ctx.host}:{ctx.internal_port};{UWSGI_PARAMS}")]


_COMMON: dict[str, Any] = dict(
    project="uWSGI",
    flavour=Flavour.PROCESS,
    env=ENV,
    version_of="uwsgi",
    system_packages=("build-essential", "python3-dev"),
)
_HANDLES = (
    "--die-on-term: SIGTERM otherwise reloads the workers",
    "--listen capped at net.core.somaxconn (uWSGI refuses a larger backlog)",
    "--disable-logging: one log line per request otherwise",
)

RECIPES = [
    ServerRecipe(
        name="uwsgi-http",
        takes_threads=True,
        launch=_http(),
        handles=_HANDLES,
        **_COMMON,
        summary="seed 003's trap: HTTP router process in front of the workers, no keep-alive",
    ),
    ServerRecipe(
        name="uwsgi-http-keepalive",
        takes_threads=True,
        launch=_http("--http-keepalive"),
        handles=_HANDLES,
        **_COMMON,
        summary="HTTP router with --http-keepalive (enough on its own); no pipelining",
    ),
    ServerRecipe(
        name="uwsgi-http11",
        takes_threads=True,
        launch=_http11,
        handles=_HANDLES,
        **_COMMON,
        summary="workers speak HTTP/1.1 themselves (--http11-socket), keep-alive, no pipelining",
    ),
    ServerRecipe(
        name="uwsgi-http11-base",
        launch=_http11_processes_only,
        handles=(*_HANDLES, "--threads never passed: processes only, whatever the study's threads"),
        **_COMMON,
        summary="seed 003's uWSGIbase: --http11-socket with worker processes only, no threads",
    ),
    ServerRecipe(
        name="uwsgi-nginx",
        tls_args=(),
        project="uWSGI",
        flavour=Flavour.PROCESS,
        env=ENV,
        version_of="uwsgi",
        system_packages=("build-essential", "python3-dev", "nginx-light"),
        binaries=(NGINX,),
        launch=_behind_nginx,
        handles=(
            *_HANDLES,
            "uwsgi_params written inline into nginx.conf",
            f"--socket-timeout {SOCKET_TIMEOUT_S} (seed 000's -z 30)",
        ),
        summary="nginx uwsgi_pass to uWSGI's binary uwsgi protocol socket",
    ),
]
