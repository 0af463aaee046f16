"""Seed 002's non-Python reference: PHP-FPM behind nginx, running apps/php/<app>.php.

php-fpm runs in the foreground (-F) from a config written to the workdir, listening on
127.0.0.1:internal_port with `workers` static children as www-data; nginx passes every request to
the one script over FastCGI, a connection per request. The scripts (pong, db) answer exactly as the
Python apps do, reading the same WSGIBENCH_DB_* settings (clear_env = no).
"""

from __future__ import annotations

import glob
import os
import shutil

from wsgibench.servers.nginx.config import NGINX, nginx_command
from wsgibench.servers.recipe import Binary, Command, Flavour, LaunchContext, ServerRecipe

USER = "www-data"


def php_fpm_binary() -> str | None:
    found = shutil.which("php-fpm") or shutil.which("php-fpm", path="/usr/sbin")
    if found:
        return found
    versions = sorted(glob.glob("/usr/sbin/php-fpm[0-9]*"))  # Debian: /usr/sbin/php-fpm8.2
    return versions[-1] if versions else None


PHP_FPM = Binary("php-fpm", find=php_fpm_binary)


def _fpm_config(ctx: LaunchContext) -> str:
    user = USER if os.geteuid() == 0 else ""
    pool_user = f"user = {user}\ngroup = {user}\n" if user else ""
    return f"""[global]
pid = {ctx.workdir}/php-fpm.pid
error_log = {ctx.workdir}/php-fpm-error.log
daemonize = no
log_level = warning

[app]
{pool_user}listen = 127.0.0.1:{ctx.internal_port}
listen.backlog = {ctx.backlog}
pm = static
pm.max_children = {ctx.workers}
pm.max_requests = 0
clear_env = no
catch_workers_output = yes
"""


def _launch(ctx: LaunchContext) -> list[Command]:
    script = ctx.app_dir / "php" / f"{ctx.app}.php"
    fpm = Command(
        [php_fpm_binary() or "php-fpm", "-F", "-y", str(ctx.workdir / "php-fpm.conf")],
        files={"php-fpm.conf": _fpm_config(ctx)},
        listens_on=ctx.internal_port,
    )
    params = "\n".join(
        f"            fastcgi_param {k} {v};"
        for k, v in (
            ("SCRIPT_FILENAME", script),
            ("REQUEST_METHOD", "$request_method"),
            ("QUERY_STRING", "$query_string"),
            ("REQUEST_URI", "$request_uri"),
            ("DOCUMENT_URI", "$document_uri"),
            ("SERVER_PROTOCOL", "$server_protocol"),
            ("CONTENT_TYPE", "$content_type"),
            ("CONTENT_LENGTH", "$content_length"),
            ("GATEWAY_INTERFACE", "CGI/1.1"),
            ("REMOTE_ADDR", "$remote_addr"),
            ("SERVER_NAME", "$server_name"),
            ("SERVER_PORT", "$server_port"),
        )
    )
    # No fastcgi_keep_conn: a php-fpm child serves one FastCGI connection until it closes, so a
    # connection nginx keeps idle would hold a child while requests on other connections wait.
    location = f"fastcgi_pass 127.0.0.1:{ctx.internal_port};\n{params}"
    return [fpm, nginx_command(ctx, location)]


RECIPES = [
    ServerRecipe(
        name="php-fpm-nginx",
        project="php-fpm",
        flavour=Flavour.REFERENCE,
        binaries=(PHP_FPM, NGINX),
        version=PHP_FPM.version,
        system_packages=("php-fpm", "php-sqlite3", "php-pgsql", "php-mysql", "nginx-light"),
        launch=_launch,
        apps=("pong", "db"),
        no_python_app="PHP (FastCGI)",
        handles=(
            "php-fpm -F (foreground) with its config in the workdir, children as www-data",
            "no FastCGI keep-alive: an idle kept connection would pin a php-fpm child",
            "PDO persistent connections: one database connection per php-fpm child",
        ),
        summary="non-Python reference (seed 002): PHP-FPM static pool behind nginx FastCGI",
    ),
]
