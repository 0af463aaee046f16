"""nginx for the recipes: finding its binary, and the configurations of the front proxy of fronted
recipes and of the bare `Pong!` baseline."""

from __future__ import annotations

import shutil
from pathlib import Path

from wsgibench.servers.recipe import Binary, Command, LaunchContext

_SEARCH = ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx")


def nginx_binary() -> str | None:
    found = shutil.which("nginx")
    if found:
        return found
    return next((p for p in _SEARCH if Path(p).exists()), None)


NGINX = Binary("nginx", find=nginx_binary, stored_as="nginx_version")


def _tls(ctx: LaunchContext) -> str:
    """The listener's end: TLS 1.3 with h2 offered by ALPN when the cell serves TLS."""
    if ctx.tls_cert is None:
        return ";"
    return (
        # `listen ... http2`: nginx 1.22 (bookworm) has no `http2 on;` yet.
        f" ssl http2;\n        ssl_certificate {ctx.tls_cert};\n"
        f"        ssl_certificate_key {ctx.tls_key};\n        ssl_protocols TLSv1.3;\n"
        "        ssl_session_cache shared:wsgibench:10m;"
    )


def _config(ctx: LaunchContext, location: str, upstream: str = "", workers: int = 1) -> str:
    tmp = ctx.workdir / "nginx-tmp"
    temps = "\n".join(
        f"    {kind}_temp_path {tmp}/{kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""
worker_processes {workers};
daemon off;
master_process on;
pid {ctx.workdir}/nginx.pid;
error_log stderr warn;
worker_rlimit_nofile 100000;
events {{
    worker_connections 65000;
}}
http {{
    access_log off;
{temps}
    tcp_nodelay on;
    keepalive_timeout 75s;
    # The default (1000) would close a busy keep-alive connection every 1000 requests.
    keepalive_requests 10000000;
    {upstream}
    server {{
        listen {ctx.host}:{ctx.port} backlog={ctx.backlog}{_tls(ctx)}
        location / {{
            {location}
        }}
    }}
}}
"""


def nginx_command(
    ctx: LaunchContext, location: str, upstream: str = "", role: str = "front", workers: int = 1
) -> Command:
    """nginx with this configuration; a front proxy keeps 1 worker, the baseline gets ctx.workers."""
    binary = nginx_binary() or "nginx"
    (ctx.workdir / "nginx-tmp").mkdir(parents=True, exist_ok=True)
    return Command(
        argv=[
            binary,
            "-e",
            "stderr",
            "-p",
            str(ctx.workdir),
            "-c",
            str(ctx.workdir / "nginx.conf"),
        ],
        files={"nginx.conf": _config(ctx, location, upstream, workers)},
        role=role,
        listens_on=ctx.port,
    )


def nginx_proxy(ctx: LaunchContext, location: str) -> Command:
    """nginx on ctx.port in front of an app server on ctx.internal_port."""
    return nginx_command(ctx, location)
