"""One's own app named as a server names it: the spec read into a folder, module and callable,
the keys that go with it checked, the probe and the request mix it gets, and one-line refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from wsgibench.errors import UsageError
from wsgibench.run.admit import refusal
from wsgibench.servers import get
from wsgibench.study.model import parse_study
from wsgibench.study.overrides import Overrides
from wsgibench.study.userapps import locate, with_interface

LOAD = {"name": "c", "model": "closed", "levels": [4], "duration_s": 1}


def _study(tmp: Path, **keys: object):
    return parse_study(
        {"servers": ["gunicorn-gthread", "uvicorn"], "load": [LOAD], **keys}, "t", tmp
    )


def test_every_way_a_newcomer_names_an_app(tmp_path: Path):
    (tmp_path / "myapp.py").write_text("app = None\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "web.py").write_text("application = None\n")
    assert locate("myapp:app", tmp_path) == (tmp_path, "myapp", "app")
    assert locate("myapp", tmp_path) == (tmp_path, "myapp", "app")
    assert locate("myapp.py", tmp_path) == (tmp_path, "myapp", "app")
    assert locate("pkg/web.py:application", tmp_path) == (tmp_path / "pkg", "web", "application")
    assert locate("pkg.web:application", tmp_path) == (tmp_path, "pkg.web", "application")
    for study_app in ("myapp:app", "myapp", "myapp.py"):
        app = _study(tmp_path, app=study_app).app_of()
        assert (app.folder, app.module_name, app.callable) == (tmp_path, "myapp", "app")
    # a module of a package its requirements install (httpbin:app): only with requirements
    with pytest.raises(UsageError, match="a module of a package you install: name it in requ"):
        locate("httpbin:app", tmp_path)
    assert locate("httpbin:app", tmp_path, installed=True) == (tmp_path, "httpbin", "app")
    (tmp_path / "req.txt").write_text("httpbin==0.10.2\n")
    app = _study(tmp_path, app="httpbin:app", requirements="req.txt").app_of()
    assert (app.module_name, app.requirements) == ("httpbin", tmp_path / "req.txt")


def test_a_file_inside_a_package_is_imported_as_the_package_imports_it(tmp_path: Path):
    """`src/shop/web/app.py` with `shop` and `web` packages is `shop.web.app` from `src` (its
    relative imports resolve); a Django project's `mysite/wsgi.py` is `mysite.wsgi` beside
    manage.py, where DJANGO_SETTINGS_MODULE = "mysite.settings" finds it."""
    web = tmp_path / "src" / "shop" / "web"
    web.mkdir(parents=True)
    for folder in (web, web.parent):
        (folder / "__init__.py").write_text("")
    (web / "app.py").write_text("from .views import app\n")
    assert locate("src/shop/web/app.py:app", tmp_path) == (tmp_path / "src", "shop.web.app", "app")
    assert locate("src/shop/web", tmp_path) == (tmp_path / "src", "shop.web", "app")
    assert locate("src/shop", tmp_path) == (tmp_path / "src", "shop", "app")
    site = tmp_path / "mysite"
    (site / "mysite").mkdir(parents=True)
    (site / "mysite" / "__init__.py").write_text("")
    (site / "mysite" / "wsgi.py").write_text("application = None\n")
    assert locate("mysite/wsgi.py:application", site) == (site, "mysite.wsgi", "application")
    odd = tmp_path / "my-pkg"  # a folder no import can name is where the walk stops
    odd.mkdir()
    (odd / "__init__.py").write_text("")
    (odd / "app.py").write_text("app = None\n")
    assert locate("my-pkg/app.py", tmp_path) == (odd, "app", "app")
    # nor above the folder it is named from, which a root-level __init__.py would take it to
    (web / "__init__.py").unlink()
    assert locate("app.py", web) == (web, "app", "app")
    (web / "__init__.py").write_text("")
    assert locate("app.py", web) == (web, "app", "app")
    study = _study(tmp_path, app="src/shop/web/app.py:app")
    assert (study.app_of().module_name, study.app_of().shown) == (
        "shop.web.app",
        "src/shop/web/app.py:app",
    )


@pytest.mark.parametrize(
    ("keys", "words"),
    [
        ({"app": "nothere.py:app"}, "does not exist"),
        ({"app": "myapp:not-a-name"}, "is not a callable's name"),
        ({"app": "myapp:create_app(CONFIG)"}, "factory's arguments must be literals"),
        ({"app": "ghost:app"}, "no ghost.py or ghost/"),
        ({"app": "pongg"}, "did you mean 'pong'"),
        ({"app": "myapp:app", "interface": "rsgi"}, 'one of "wsgi", "asgi"'),
        ({"app": "myapp:app", "requirements": "missing.txt"}, "requirements: "),
        ({"app": "pong", "requirements": "r.txt"}, "requirements is for your own app"),
        ({"app": "myapp:app", "probe": {"path": "/h", "stauts": 200}}, "unknown key probe.stauts"),
    ],
)
def test_a_wrong_app_is_one_line_naming_it(tmp_path: Path, keys: dict, words: str):
    (tmp_path / "myapp.py").write_text("app = None\n")
    with pytest.raises(UsageError) as err:
        _study(tmp_path, **keys)
    assert words in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith("t")


def test_interface_stated_or_read_decides_which_servers_take_it(tmp_path: Path):
    (tmp_path / "svc.py").write_text("app = None\n")
    wsgi, asgi = get("gunicorn-gthread"), get("uvicorn")
    stated = _study(tmp_path, app="svc:app", interface="asgi").app_of()
    assert stated.module_for("ASGI") == "svc" and stated.module_for("WSGI") is None
    assert refusal(wsgi, stated, 1) is not None
    read = with_interface(_study(tmp_path, app="svc:app").app_of(), "wsgi")
    assert read.module_for("WSGI") == "svc" and read.module_for("ASGI") is None
    refused = refusal(asgi, read, 1)
    assert refused is not None and "no ASGI version" in (refused.reason or "")
    both = _study(tmp_path, app="svc:app", app_asgi="svc:asgi").app_of()
    assert (both.module_for("WSGI"), both.callable_for("WSGI")) == ("svc", "app")
    assert (both.module_for("ASGI"), both.callable_for("ASGI")) == ("svc", "asgi")


def test_nginx_alone_is_no_server_for_ones_own_app(tmp_path: Path):
    (tmp_path / "svc.py").write_text("app = None\n")
    app = with_interface(_study(tmp_path, app="svc:app").app_of(), "wsgi")
    refused = refusal(get("nginx-baseline"), app, 1)
    assert refused is not None and "runs no Python app" in (refused.reason or "")


def test_probe_and_requests_of_ones_own_app(tmp_path: Path):
    (tmp_path / "svc.py").write_text("app = None\n")
    (tmp_path / "item.json").write_text('{"name": "x"}')
    plain = _study(tmp_path, app="svc:app")
    assert plain.requests[0].path == "/" and plain.requests[0].expect == {"status": 200}
    assert (plain.app_of().probe.path, plain.app_of().probe.body) == ("/", None)
    mixed = _study(
        tmp_path,
        app="svc:app",
        requests=[
            {"name": "post", "method": "POST", "path": "/items", "body_file": "item.json"},
            {
                "name": "list",
                "path": "/items",
                "query": {"page": 2, "q": "a b"},
                "expect": {"status": 201},
            },
        ],
    )
    post, listed = mixed.requests
    assert post.body == '{"name": "x"}' and listed.path == "/items?page=2&q=a+b"
    probe = mixed.app_of().probe
    assert (probe.path, probe.status, probe.body) == ("/items?page=2&q=a+b", 201, None)
    given = _study(tmp_path, app="svc:app", probe={"path": "/health", "status": 204})
    assert given.app_of().probe.accepts(204, b"anything")
    assert not given.app_of().probe.accepts(200, b"")


def test_the_command_line_names_the_app_and_the_request(tmp_path: Path, monkeypatch):
    (tmp_path / "svc.py").write_text("app = None\n")
    study_file = tmp_path / "sub" / "s.toml"
    study_file.parent.mkdir()
    study_file.write_text(
        'servers = ["uvicorn"]\n[[load]]\nmodel = "closed"\nlevels = [4]\nduration_s = 1\n'
    )
    monkeypatch.chdir(tmp_path)
    from wsgibench.study.overrides import load_with

    study, said = load_with(
        str(study_file), Overrides(app="svc:app", path="/api", expect_status=202)
    )
    assert study.app_of().folder == tmp_path  # relative to the working directory
    assert [(r.path, r.expect) for r in study.requests] == [("/api", {"status": 202})]
    assert said == ["--app svc:app", "--path /api --expect-status 202"]
    with pytest.raises(UsageError, match="--expect-status goes with --path"):
        load_with(str(study_file), Overrides(expect_status=200))


def test_a_loads_own_app_and_servers(tmp_path: Path):
    study = parse_study(
        {
            "servers": ["gunicorn-gthread", "uvicorn"],
            "load": [LOAD, {**LOAD, "name": "f", "app": "flask", "servers": ["gunicorn-gthread"]}],
        },
        "t",
        tmp_path,
    )
    pong, flask = study.loads
    assert study.servers_of(pong) == ("gunicorn-gthread", "uvicorn")
    assert study.servers_of(flask) == ("gunicorn-gthread",)
    assert study.app_of(flask).name == "flask" and study.app_of(pong).name == "pong"
    assert [r.name for r in study.requests_of(flask)] == ["plaintext", "json", "db", "echo"]
    assert study.cell_count() == 3
    with pytest.raises(UsageError, match="app: unknown app 'flaks'"):
        parse_study({"servers": ["uvicorn"], "load": [{**LOAD, "app": "flaks"}]}, "t", tmp_path)


def test_a_tune_study_needs_no_load_and_checks_its_table(tmp_path: Path):
    study = parse_study(
        {
            "servers": ["gunicorn-gthread"],
            "app": "sleep",
            "tune": {"slo_p99_ms": 200, "threads": [1, 8]},
        },
        "t",
        tmp_path,
    )
    assert study.tune == {"slo_p99_ms": 200.0, "threads": [1, 8]}
    with pytest.raises(UsageError, match="tune.slo_p99_ms is required"):
        parse_study({"servers": ["waitress"], "tune": {"threads": [2]}}, "t", tmp_path)
    with pytest.raises(UsageError, match="unknown key tune.thread"):
        parse_study(
            {"servers": ["waitress"], "tune": {"slo_p99_ms": 1, "thread": [2]}}, "t", tmp_path
        )


def test_the_command_line_gives_ones_own_apps_requirements(tmp_path: Path, monkeypatch):
    (tmp_path / "svc.py").write_text("app = None\n")
    (tmp_path / "req.txt").write_text("humanize==4.12.3\n")
    monkeypatch.chdir(tmp_path)
    from wsgibench.study.overrides import load_with

    study, said = load_with("quick", Overrides(app="svc:app", requirements="req.txt"))
    assert study.app_of().requirements == (tmp_path / "req.txt").resolve()
    assert said == ["--app svc:app", "--requirements req.txt"]
    with pytest.raises(UsageError, match="--requirements is for your own app .* 'pong' is built"):
        load_with("quick", Overrides(requirements="req.txt"))
    with pytest.raises(UsageError, match="--requirements: .*nope.txt is not a file"):
        load_with("quick", Overrides(app="svc:app", requirements="nope.txt"))
    both, said = load_with("quick", Overrides(app="svc:app", app_asgi="svc:asgi"))
    assert (both.app_of().asgi_module, both.app_of().asgi_callable) == ("svc", "asgi")
    assert said == ["--app svc:app", "--app-asgi svc:asgi"]
    with pytest.raises(UsageError, match="--app-asgi is the ASGI side of your own app"):
        load_with("quick", Overrides(app_asgi="svc:asgi"))


def test_a_tune_study_gives_every_round_its_apps_keys(tmp_path: Path):
    # Each round of a tuning is a study of its own: one's own app must keep its requirements,
    # probe and requests there, paths resolved against the study's folder.
    from wsgibench.cli.tune import _app_keys

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "svc.py").write_text("app = None\n")
    (tmp_path / "req.txt").write_text("humanize==4.12.3\n")
    keys = {
        "app": "app/svc.py:app",
        "requirements": "req.txt",
        "probe": {"path": "/health", "status": 200, "body": "ok"},
        "requests": [{"name": "i", "path": "/items", "expect": {"status": 200}}],
    }
    study = parse_study(
        {"servers": ["uvicorn"], "tune": {"slo_p99_ms": 100}, **keys}, "t", tmp_path
    )
    given = _app_keys(study)
    assert given["requirements"] == str((tmp_path / "req.txt").resolve())
    elsewhere = tmp_path / "elsewhere"  # the rounds parse against the app's folder, not the study's
    elsewhere.mkdir()
    app_file = str(tmp_path / "app" / "svc.py") + ":app"
    again = parse_study(
        {"servers": ["uvicorn"], "load": [LOAD], "app": app_file, **given}, "r", elsewhere
    )
    assert again.app_of().requirements == study.app_of().requirements
    assert again.app_of().probe == study.app_of().probe
    assert [(r.path, r.expect) for r in again.requests] == [("/items", {"status": 200})]
    built_in = parse_study({"servers": ["uvicorn"], "app": "flask", "tune": {"slo_p99_ms": 1}}, "t")
    assert "requirements" not in _app_keys(built_in)  # a framework's own pins stay its own


def test_another_app_on_the_command_line_leaves_the_studys_app_keys_out(
    tmp_path: Path, monkeypatch
):
    """`run STUDY --app mine`: the study's request mix, probe, settings and paths judged, set
    and installed *its* app; carried over they would send /slow to one's own app (all invalid)
    or serve the study's own ASGI side on the ASGI servers."""
    for name in ("svc", "theirs"):
        (tmp_path / f"{name}.py").write_text("app = None\nasgi = None\n")
    (tmp_path / "req.txt").write_text("humanize==4.12.3\n")
    study_file = tmp_path / "s.toml"
    study_file.write_text(
        'servers = ["uvicorn", "waitress"]\napp = "theirs:app"\napp_asgi = "theirs:asgi"\n'
        'requirements = "req.txt"\napp_env = { THEIRS = "1" }\n'
        'probe = { path = "/health", status = 204 }\n'
        '[[requests]]\nname = "h"\npath = "/health"\nexpect = { status = 204 }\n'
        '[[load]]\nmodel = "closed"\nlevels = [4]\nduration_s = 1\n'
    )
    monkeypatch.chdir(tmp_path)
    from wsgibench.study.overrides import load_with

    mixed, said = load_with("tornado2015-mixed", Overrides(app="svc:app"))
    assert [(r.path, r.expect) for r in mixed.requests] == [("/", {"status": 200})]
    assert mixed.app_env == {} and mixed.app_of().probe.path == "/"
    assert said == ["--app svc:app (the study's requests, app_env for its app 'mixed' left out)"]
    assert mixed.description.endswith("(run here on svc:app, not mixed: --app)")
    assert mixed.raw["description"] == mixed.description  # as stored and reported

    mine, said = load_with(str(study_file), Overrides(app="svc:app", app_env=("MINE=2",)))
    app = mine.app_of()
    assert (app.module_name, app.asgi_module, app.requirements) == ("svc", None, None)
    assert mine.app_env == {"MINE": "2"} and app.probe.path == "/"
    assert said[0] == "--app-env MINE=2"
    assert said[1].startswith("--app svc:app (the study's app_asgi, requirements, probe")

    same, said = load_with(str(study_file), Overrides(app="theirs:app"))
    assert same.app_of().asgi_module == "theirs" and same.app_env == {"THEIRS": "1"}
    assert [r.path for r in same.requests] == ["/health"] and said == ["--app theirs:app"]
    assert "--app" not in load_with("tornado2015-mixed", Overrides())[0].description


def test_loads_that_are_not_the_studys_apps_stay_with_it(tmp_path: Path, monkeypatch):
    """`run frameworks --app mine`: the loads naming a framework of their own go (kept, the report
    would rank them against one's own app as if it were pong, their ceiling); a load naming a
    database measures the study's app on it and goes unless the new app uses one; `--servers`
    leaves out the loads that run on none of the servers given."""
    (tmp_path / "svc.py").write_text("app = None\n")
    monkeypatch.chdir(tmp_path)
    from wsgibench.study.overrides import load_with

    mine, said = load_with("frameworks", Overrides(app="svc:app", full=True))
    assert [load.name for load in mine.loads] == ["app"] and mine.app_of().name != "pong"
    assert mine.loads[0].levels == (16, 64, 256)  # its [full.load.pong] table, renamed with it
    assert said[-1] == (
        "--app svc:app (left out, loads of apps of their own: flask, django, fastapi, starlette, "
        "falcon, litestar)"
    )
    waitress, said = load_with("frameworks", Overrides(servers="waitress"))
    assert [load.name for load in waitress.loads] == ["pong", "flask", "django", "falcon"]
    assert said == [
        "--servers waitress (left out, loads on none of them: fastapi, starlette, litestar)"
    ]
    with pytest.raises(
        UsageError, match="every load of db2011 measures its app 'db' on a database"
    ):
        load_with("db2011", Overrides(app="svc:app"))
    assert len(load_with("db2011", Overrides(app="db"))[0].loads) == 3  # its own app: all stay

    one = 'model = "closed"\nlevels = [4]\nduration_s = 1\n'
    study_file = tmp_path / "s.toml"
    study_file.write_text(
        f'servers = ["waitress"]\napp = "db"\n[[load]]\nname = "plain"\n{one}'
        f'[[load]]\nname = "pg"\ndatabase = "postgresql"\n{one}'
        f'[[load]]\nname = "own"\napp = "flask"\nservers = ["bjoern"]\n{one}'
    )
    with pytest.raises(UsageError, match="'own' names none of the study's servers"):
        load_with(str(study_file), Overrides())  # a study file's own mistake is still its own
    study_file.write_text(study_file.read_text().replace('["bjoern"]', '["waitress"]'))
    kept, said = load_with(str(study_file), Overrides(app="svc:app"))
    assert [load.name for load in kept.loads] == ["plain"]
    assert said[-1].endswith(
        "(left out, loads of apps of their own: own; on a database for 'db': pg)"
    )
    study_file.write_text(f'servers = ["waitress"]\n[[load]]\nservers = ["waitress"]\n{one}')
    with pytest.raises(UsageError, match="--servers bjoern: every load of .* names its own"):
        load_with(str(study_file), Overrides(servers="bjoern"))
