"""ASGI beside WSGI: each server gets the study's app in its interface, an app without an ASGI
version is unavailable to ASGI servers, and the loop and parser are read from what the app saw."""

from __future__ import annotations

import pytest

from wsgibench.errors import UsageError
from wsgibench.run.admit import refusal
from wsgibench.run.appcheck import _some_server_takes
from wsgibench.run.cell import Placement, serve_options
from wsgibench.run.checks import parse_runtime
from wsgibench.servers import get
from wsgibench.study.apps import get_app
from wsgibench.study.model import parse_study

PLACED = Placement(server_cpus=[0], engine_cpus=[1], workers=1)
LOAD = {"name": "c", "model": "closed", "levels": [4], "duration_s": 1}


def test_each_interface_gets_its_version_of_the_app():
    assert get_app("pong").module_for("WSGI") == "pong"
    assert get_app("pong").module_for("ASGI") == "asgi_pong"
    assert get_app("mixed").module_for("ASGI") == "asgi_sleep"
    study = parse_study({"servers": ["uvicorn", "waitress"], "app": "mixed", "load": [LOAD]}, "t")
    app = study.app_of()
    assert serve_options(study, PLACED, {}, app, ()).app.name == "mixed"  # resolved at start


def test_an_app_without_an_asgi_version_is_unavailable_to_asgi_servers():
    study = parse_study({"servers": ["uvicorn"], "app": "pong_slow", "load": [LOAD]}, "t")
    refused = refusal(get("uvicorn"), study.app_of(), 1)
    assert refused is not None and refused.status == "unavailable"
    assert refused.reason == "an ASGI server; app 'pong_slow' has no ASGI version"
    assert get_app("db").module_for("ASGI") == "asgi_db"


def test_ones_own_wsgi_app_is_told_how_to_name_its_asgi_side(tmp_path):
    (tmp_path / "site.py").write_text("def application(environ, start_response): ...\n")
    study = parse_study(
        {"servers": ["uvicorn"], "app": "site:application", "interface": "wsgi", "load": [LOAD]},
        "t",
        tmp_path,
    )
    refused = refusal(get("uvicorn"), study.app_of(), 1)
    assert refused is not None and refused.reason == (
        "an ASGI server; app 'site:application' has no ASGI version"
        " (an app with an ASGI side names it with app_asgi, or --app-asgi)"
    )


def test_loop_and_parser_from_what_the_app_saw():
    seen = {
        "loop": "uvloop.Loop",
        "modules": ["asgi_pong", "uvicorn.protocols.http.httptools_impl", "uvloop"],
    }
    assert parse_runtime(seen) == {
        "loop": "uvloop",
        "http": "httptools",
        "loop_class": "uvloop.Loop",
    }
    fallen = {
        "loop": "asyncio.unix_events._UnixSelectorEventLoop",
        "modules": ["asgi_pong", "uvicorn.protocols.http.h11_impl"],
    }
    assert parse_runtime(fallen)["loop"] == "asyncio" and parse_runtime(fallen)["http"] == "h11"


def test_the_twisted_reactor_and_gunicorns_parser_from_what_the_app_saw():
    # the stack Daphne 4.2.3 showed: the app run by Twisted's asyncio reactor
    daphne = {
        "loop": "asyncio.unix_events._UnixSelectorEventLoop",
        "modules": [
            "asgi_pong",
            "asyncio.base_events",
            "twisted.internet.asyncioreactor",
            "daphne.server",
        ],
    }
    assert parse_runtime(daphne)["reactor"] == "asyncio"
    assert parse_runtime(daphne)["http"] == "unknown"  # Twisted's parser is not on the stack
    assert "reactor" not in parse_runtime({"loop": "uvloop.Loop", "modules": ["uvicorn.main"]})
    gunicorn = {"loop": "uvloop.Loop", "modules": ["asgi_pong", "gunicorn.asgi.protocol"]}
    assert parse_runtime(gunicorn)["http"] == "gunicorn"


def test_a_native_server_gets_the_apps_version_in_its_own_interface():
    rsgi = get("granian-rsgi")
    assert rsgi.interface_label == "native (RSGI)" and get("granian").interface_label == "WSGI"
    assert get_app("pong").module_for(rsgi.interface, rsgi.native_api) == "rsgi_pong"
    assert get_app("sleep").module_for(rsgi.interface, rsgi.native_api) is None
    study = parse_study({"servers": ["granian-rsgi"], "app": "sleep", "load": [LOAD]}, "t")
    refused = refusal(rsgi, study.app_of(), 1)
    assert refused is not None and refused.status == "unavailable"
    assert refused.reason == "a native (RSGI) server; app 'sleep' has no RSGI version"


def test_tornados_own_handlers_are_native_and_serve_only_their_apps():
    native = get("tornado-native-async")
    assert native.interface_label == "native (tornado handlers)"
    study = parse_study({"servers": [native.name], "app": "pong", "load": [LOAD]}, "t")
    refused = refusal(native, study.app_of(), 1)
    assert (
        refused is not None and refused.reason == "serves only the app(s) sleep, mixed, not 'pong'"
    )


def test_ones_own_app_with_no_server_of_its_interface_stops_naming_where_to_run(tmp_path):
    (tmp_path / "site.py").write_text("def application(environ, start_response): ...\n")
    raw = {"servers": ["uvicorn", "granian-asgi"], "app": "site:application", "load": [LOAD]}
    wsgi = parse_study({**raw, "interface": "wsgi"}, "t", tmp_path).app_of()
    with pytest.raises(UsageError, match=r"is WSGI and none .* `wsgibench run quick`") as err:
        _some_server_takes(wsgi, ("uvicorn", "granian-asgi", "nginx-baseline"))
    assert "waitress" in str(err.value) and "uvicorn" not in str(err.value).split("(")[1]
    _some_server_takes(wsgi, ("uvicorn", "waitress"))  # one server that serves it is enough
    _some_server_takes(get_app("pong"), ("uvicorn",))  # a built-in: its own versions decide
