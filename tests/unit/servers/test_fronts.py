"""A server behind nginx: `name+nginx` (and `name@version+nginx`) is the server on a second port
in clear text behind an nginx front that holds the engine's connections, terminates TLS and keeps
its own connections to the server; entries that are nginx or have a front already are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from wsgibench.errors import UsageError
from wsgibench.servers import get, resolve
from wsgibench.servers.parity import KEEP, audited
from wsgibench.servers.recipe import LaunchContext
from wsgibench.servers.versions import split
from wsgibench.study.parity import undeclared


def _ctx(tmp_path: Path, tls: bool) -> LaunchContext:
    return LaunchContext(
        host="127.0.0.1",
        port=41000,
        internal_port=41001,
        workers=2,
        threads=1,
        backlog=1024,
        app="asgi_pong",
        app_dir=tmp_path,
        workdir=tmp_path,
        python=Path("/env/bin/python"),
        tls_cert=tmp_path / "cert.pem" if tls else None,
        tls_key=tmp_path / "key.pem" if tls else None,
    )


def test_a_fronted_name_resolves_to_its_server_behind_nginx():
    recipe = get("uvicorn+nginx")
    base = get("uvicorn")
    assert recipe.name == "uvicorn+nginx" and recipe.env == base.env
    assert "nginx" in [b.name for b in recipe.binaries]
    assert "nginx-light" in recipe.system_packages
    assert recipe.tls_args == ()  # nginx takes the certificate, not the server
    assert resolve(["uvicorn+nginx", "uvicorn"]) == ["uvicorn+nginx", "uvicorn"]
    # Its settings and its release are its server's.
    assert split("uvicorn+nginx") == ("uvicorn", None)
    assert split("uvicorn@0.30.0+nginx") == ("uvicorn", "0.30.0")
    assert get("uvicorn@0.30.0+nginx").env != base.env


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("nginx-baseline+nginx", "not a Python server that nginx can front"),
        ("gunicorn-3w-nginx+nginx", "not a Python server that nginx can front"),
        ("uwsgi-nginx+nginx", "not a Python server that nginx can front"),
        ("uvicorn+nginx@0.30.0", "SERVER@VERSION\\+nginx"),
        ("nosuch+nginx", "unknown server 'nosuch'"),
    ],
)
def test_what_nginx_cannot_front_is_a_one_line_refusal(name: str, said: str):
    with pytest.raises(UsageError, match=said):
        get(name)


@pytest.mark.parametrize("tls", [False, True])
def test_the_server_serves_clear_text_behind_the_front(tmp_path: Path, tls: bool):
    *backend, front = get("uvicorn+nginx").launch(_ctx(tmp_path, tls))  # type: ignore[misc]
    server = backend[-1]
    assert server.role == "server" and server.listens_on == 41001
    port = server.argv.index("--port")
    assert server.argv[port + 1] == "41001"
    assert not any(a.startswith("--ssl") for a in server.argv)
    assert front.role == "front" and front.listens_on == 41000
    conf = front.files["nginx.conf"]
    assert "server 127.0.0.1:41001;" in conf and "keepalive 128;" in conf
    assert "proxy_http_version 1.1;" in conf and "$http_upgrade" in conf
    assert "listen 127.0.0.1:41000" in conf
    assert (f"ssl_certificate {tmp_path / 'cert.pem'};" in conf) is tls
    assert ("ssl http2;" in conf) is tls


def test_its_audit_says_nginx_holds_the_connections():
    fronted, base = audited("uvicorn+nginx"), audited("uvicorn")
    assert fronted is not None and base is not None
    assert base.keep_alive == KEEP and fronted.keep_alive.startswith(KEEP)
    assert "nginx" in fronted.keep_alive and fronted.loop == base.loop
    # A study comparing a server with and without its front declares the difference.
    said = undeclared(["uvicorn", "uvicorn+nginx"], {})
    assert any(s.startswith("keep_alive differs") for s in said), said
    assert undeclared(["uvicorn", "uvicorn+nginx"], {"keep_alive": "nginx in front"}) == []
