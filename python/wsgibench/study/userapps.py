"""Your own app, named as a server names it (`package.module:callable`, `path/to/file.py:callable`),
with its dependencies, its working directory and its probe: an AppSpec like the built-ins'."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from wsgibench.errors import UsageError
from wsgibench.study.apps import APPS, AppSpec, Probe
from wsgibench.study.factory import check_call, is_call
from wsgibench.study.kinds import read_table
from wsgibench.study.loads import RequestKind
from wsgibench.study.request_keys import PROBE_KEYS

_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_CALLABLE = re.compile(r"[A-Za-z_]\w*")
# A user's app with no request mix of its own: GET / answered 200, whatever the body.
DEFAULT_REQUEST = RequestKind(name="root", path="/", expect={"status": 200})


def is_user_spec(name: str) -> bool:
    """Whether an app name is a spec of one's own app rather than a built-in's name."""
    return name not in APPS and (":" in name or "/" in name or "." in name or name.isidentifier())


def locate(spec: str, base: Path, installed: bool = False) -> tuple[Path, str, str]:
    """The app's folder, module and callable: `file.py[:callable]`, `dir/file.py[:callable]`,
    `package.module[:callable]` (relative to `base`, or with `installed` a module of a package
    its requirements install, such as `httpbin:app`); the callable is `app` when left out, and
    may be a factory's call with literal arguments (`create_app()`, `create_app("prod")`)."""
    target, _, attr = spec.partition(":")
    attr = attr or "app"
    if is_call(attr):  # an app factory, called as gunicorn calls it
        check_call(spec, attr)
    elif not _CALLABLE.fullmatch(attr):
        raise UsageError(f"app {spec!r}: {attr!r} is not a callable's name")
    if target.endswith(".py") or "/" in target:
        path = (base / target).resolve()
        if not path.exists():
            raise UsageError(f"app {spec!r}: {path} does not exist")
        return (*importable(path, base.resolve()), attr)
    if not _MODULE.fullmatch(target):
        raise UsageError(f"app {spec!r}: {target!r} is not a module name (package.module:callable)")
    top = target.split(".")[0]
    if not ((base / f"{top}.py").exists() or (base / top).is_dir() or installed):
        raise UsageError(
            f"app {spec!r}: no {top}.py or {top}/ in {base.resolve()} "
            "(a path to the file works too: path/to/file.py:callable; a module of a package "
            "you install: name it in requirements)"
        )
    return base.resolve(), target, attr


def importable(path: Path, base: Path) -> tuple[Path, str]:
    """A file or folder as Python imports it: from the first folder above it that is not a
    package, by its dotted name (`src/shop/web/app.py`, `shop` and `web` packages: `src`,
    `shop.web.app`), so that its relative imports and its package's absolute ones resolve (a
    Django project's `mysite/wsgi.py` is `mysite.wsgi`, beside `manage.py`). Never above `base`
    (the working directory, or the study's folder): that folder is copied for every start."""
    parts = [path.name if path.is_dir() else path.stem]
    folder = path.parent
    while folder != base and (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def user_app(
    spec: str, base: Path, values: dict[str, Any], requests: tuple[RequestKind, ...], where: str
) -> AppSpec:
    """The AppSpec of one's own app from the study's keys (app, interface, app_asgi,
    requirements, app_workdir, probe); its interface is read at start unless the study says."""
    requirements = _path(values.get("requirements"), base, "requirements", where)
    installed = requirements is not None  # its module may be a package they install
    try:
        folder, module, attr = locate(spec, base, installed)
        asgi = values.get("app_asgi")
        asgi_folder, asgi_module, asgi_attr = (
            locate(asgi, base, installed) if asgi else (folder, None, "app")
        )
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    if asgi and asgi_folder != folder:
        raise UsageError(f"{where}: app_asgi {asgi!r} must be in the folder of app {spec!r}")
    interface = values.get("interface", "")
    if asgi and interface == "asgi":
        raise UsageError(f"{where}: app_asgi is the ASGI side; app must then be WSGI")
    workdir = _path(values.get("app_workdir"), base, "app_workdir", where)
    requests = requests or (DEFAULT_REQUEST,)
    app = AppSpec(
        name=f"{module}:{attr}",
        summary=f"your app {spec}" + (f" (ASGI: {asgi})" if asgi else ""),
        requests=requests,
        module=module,
        callable=attr,
        asgi_module=asgi_module,
        asgi_callable=asgi_attr,
        folder=folder,
        workdir=workdir,
        requirements=requirements,
        probe=probe_of(values.get("probe"), requests, where, user=True),
        spec=spec,
        interface="wsgi" if asgi else interface,
    )
    return with_interface(app, interface) if interface and not asgi else app


def with_interface(app: AppSpec, interface: str) -> AppSpec:
    """The app once its interface is known (stated, or read from the callable): an ASGI-only app
    is its module in the ASGI slot and none in WSGI's."""
    if interface != "asgi" or app.asgi_module is not None:
        return replace(app, interface=interface or app.interface)
    return replace(
        app, interface="asgi", wsgi=False, asgi_module=app.module, asgi_callable=app.callable
    )


def probe_of(
    raw: dict[str, Any] | None, requests: tuple[RequestKind, ...], where: str, user: bool
) -> Probe:
    """The study's probe; else a user's app is probed on its first GET request (the path and
    status it expects), a built-in on /ping."""
    if raw is not None:
        values = read_table(raw, PROBE_KEYS, where, "probe.")
        body = values.get("body")
        return Probe(
            path=values.get("path", "/ping"),
            status=values.get("status", 200),
            body=body.encode() if body is not None else None,
        )
    if not user:
        return Probe()
    first = next((r for r in requests if r.method in ("GET", "HEAD")), DEFAULT_REQUEST)
    return Probe(path=first.path, status=int(first.expect.get("status", 200)), body=None)


def _path(value: str | None, base: Path, key: str, where: str) -> Path | None:
    if value is None:
        return None
    path = (base / value).resolve()
    if not path.exists():
        raise UsageError(f"{where}: {key}: {path} does not exist")
    return path
