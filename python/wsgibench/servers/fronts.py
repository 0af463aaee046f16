"""A server behind nginx: `uvicorn+nginx` is the uvicorn recipe on a second port behind one nginx
worker that takes the engine's connections, terminates TLS when the cell serves it (TLS 1.3, h2
offered by ALPN) and proxies HTTP/1.1 with upstream keep-alive and WebSocket upgrades to the
server in clear text, as the servers' deployment guides put them behind nginx."""

from __future__ import annotations

from dataclasses import replace

from wsgibench.errors import UsageError
from wsgibench.servers.nginx.config import NGINX, nginx_command
from wsgibench.servers.recipe import Command, LaunchContext, ServerRecipe

SUFFIX = "+nginx"

# Connection: "upgrade" for a WebSocket upgrade, else empty so the upstream connection is kept.
_UPSTREAM = """map $http_upgrade $wsgibench_connection {{
        default upgrade;
        '' '';
    }}
    upstream wsgibench_backend {{
        server {host}:{port};
        keepalive 128;
        # nginx's default (1000) would close an upstream connection every 1000 requests.
        keepalive_requests 10000000;
        keepalive_timeout 75s;
    }}"""

_LOCATION = """proxy_pass http://wsgibench_backend;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $wsgibench_connection;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_read_timeout 3600s;"""

HANDLES = (
    "behind one nginx worker on the same server CPUs: nginx takes the engine's connections, "
    "terminates TLS when the cell serves it (TLS 1.3, h2 by ALPN) and proxies HTTP/1.1",
    "upstream keep-alive (128 idle connections, no request limit) and WebSocket upgrades passed "
    "through; the server itself serves clear text on a second port",
)


def split(name: str) -> tuple[str, bool]:
    """`server+nginx` -> (server, True); any other name -> (name, False)."""
    if name.endswith(SUFFIX):
        return name.removesuffix(SUFFIX), True
    return name, False


def behind_nginx(recipe: ServerRecipe) -> ServerRecipe:
    """The recipe on ctx.internal_port behind an nginx front on ctx.port; a UsageError for an
    entry that has a front already or is nginx itself."""
    name = f"{recipe.name}{SUFFIX}"
    if NGINX in recipe.binaries or recipe.no_python_app:
        raise UsageError(f"{name}: {recipe.name} is not a Python server that nginx can front")
    if recipe.launch is None:
        return replace(recipe, name=name)  # unavailable: says why already
    base_launch = recipe.launch

    def launch(ctx: LaunchContext) -> list[Command]:
        inner = replace(ctx, port=ctx.internal_port, tls_cert=None, tls_key=None)
        backend = base_launch(inner)
        backend[-1] = replace(backend[-1], listens_on=ctx.internal_port)
        upstream = _UPSTREAM.format(host=ctx.host, port=ctx.internal_port)
        return [*backend, nginx_command(ctx, _LOCATION, upstream)]

    return replace(
        recipe,
        name=name,
        binaries=(*recipe.binaries, NGINX),
        system_packages=(*recipe.system_packages, "nginx-light"),
        launch=launch,
        # nginx reads the certificate from the context; the server behind it serves clear text.
        tls_args=(),
        handles=(*recipe.handles, *HANDLES),
        summary=f"{recipe.summary}; behind nginx (proxy_pass, upstream keep-alive)",
    )
