"""The frameworks people deploy, built in: Flask, Django, FastAPI, Starlette, Falcon and Litestar
(apps/frameworks/), each pinned and locked, with the same four endpoints validated on every reply."""

from __future__ import annotations

from wsgibench.paths import APPS_DIR
from wsgibench.study.appspec import AppSpec
from wsgibench.study.loads import RequestKind

FOLDER = APPS_DIR / "frameworks"
HELLO = "Hello, World!"
# The 1 KB POST echoed back: printable, so that it travels as the plan's text, and not periodic
# over short spans, so that a server or framework that cut or repeated a piece would be seen.
ECHO_BODY = "".join(f"{(i * 7919) % 10007:05d}-" for i in range(171))[:1024]


def _number(row_id: int) -> int:
    """The db rows' randomNumber, as apps/frameworks/fwdata.py fills the table."""
    return (row_id * 7919) % 10_000 + 1


REQUESTS: tuple[RequestKind, ...] = (
    RequestKind(
        name="plaintext",
        path="/plaintext",
        expect={"status": 200, "body": HELLO, "content_type": "text/plain"},
    ),
    RequestKind(
        name="json",
        path="/json",
        expect={"status": 200, "json": {"message": HELLO}, "content_type": "application/json"},
    ),
    # 20 rows of a SQL query through the framework's serialiser: the first and the last row
    # (a missing row leaves rows.19 out) with their values.
    RequestKind(
        name="db",
        path="/db",
        expect={
            "status": 200,
            "content_type": "application/json",
            "json": {
                "rows.0.id": 1001,
                "rows.0.randomNumber": _number(1001),
                "rows.10.id": 1011,
                "rows.19.id": 1020,
                "rows.19.randomNumber": _number(1020),
            },
        },
    ),
    RequestKind(
        name="echo",
        method="POST",
        path="/echo",
        headers={"Content-Type": "application/octet-stream"},
        body=ECHO_BODY,
        expect={"status": 200, "body": ECHO_BODY, "content_type": "application/octet-stream"},
    ),
)


def _framework(
    name: str,
    title: str,
    module: str,
    callable_: str = "app",
    asgi: str | None = None,
    wsgi: bool = True,
) -> AppSpec:
    requirements = FOLDER / "requirements" / f"{name}.txt"
    pin = requirements.read_text().split()[0]
    sides = " and ".join(filter(None, ["WSGI" if wsgi else "", "ASGI" if asgi or not wsgi else ""]))
    return AppSpec(
        name=name,
        summary=f"{title} ({pin}, {sides}): /plaintext, /json, /db (20 rows), POST /echo (1 KB)",
        requests=REQUESTS,
        module=module,
        callable=callable_,
        asgi_module=module if (asgi or not wsgi) else None,
        asgi_callable=asgi or callable_,
        wsgi=wsgi,
        folder=FOLDER,
        requirements=requirements,
        lock=requirements.with_suffix(".lock"),
    )


FRAMEWORKS: tuple[AppSpec, ...] = (
    _framework("flask", "Flask", "flask_bench"),
    _framework("django", "Django", "django_bench", "application", asgi="asgi_application"),
    _framework("fastapi", "FastAPI", "fastapi_bench", wsgi=False),
    _framework("starlette", "Starlette", "starlette_bench", wsgi=False),
    _framework("falcon", "Falcon", "falcon_bench", asgi="asgi_app"),
    _framework("litestar", "Litestar", "litestar_bench", wsgi=False),
)
