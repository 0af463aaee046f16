"""A server at a release: `name@version` splits, pins the project's distribution in a venv and a
lock of its own, is unavailable (said why) outside the releases its recipe is written for, and
bad names are one-line refusals."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from wsgibench.errors import UsageError
from wsgibench.machine import venvs
from wsgibench.machine.topology import build, layout
from wsgibench.run.cell import place
from wsgibench.servers import get, resolve
from wsgibench.servers.versions import at_version, split
from wsgibench.study.overrides import Overrides, load_with


def test_a_name_splits_at_its_release():
    assert split("gunicorn-gthread@19.9.0") == ("gunicorn-gthread", "19.9.0")
    assert split("waitress") == ("waitress", None)
    with pytest.raises(UsageError, match="SERVER@VERSION"):
        split("waitress@")


def test_a_release_gets_its_own_pin_venv_and_lock(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("WSGIBENCH_HOME", str(tmp_path))
    base = get("gunicorn-gthread")
    old = at_version(base, "19.9.0")
    assert old.name == "gunicorn-gthread@19.9.0" and old.unavailable is None
    assert old.env is not None and base.env is not None
    assert "gunicorn==19.9.0" in old.env.requirements
    assert not any(
        r.startswith("gunicorn==") and r != "gunicorn==19.9.0" for r in old.env.requirements
    )
    assert old.env.name == f"{base.env.name}@19.9.0" and old.env.lock_on_install
    assert old.env.lock == tmp_path / "locks" / f"{base.env.name}@19.9.0.lock"
    assert venvs.env_path(old.env) != venvs.env_path(base.env)
    # the launch is the recipe's own
    assert old.launch is base.launch and old.version_of == "gunicorn"


def test_get_and_resolve_take_a_release():
    assert get("waitress@3.0.0").name == "waitress@3.0.0"
    assert resolve(["waitress@3.0.0", "waitress", "waitress@3.0.0"]) == [
        "waitress@3.0.0",
        "waitress",
    ]


def test_a_release_outside_the_recipes_range_is_unavailable_with_the_reason():
    ranged = replace(get("gunicorn-gthread"), versions=">=20")
    assert at_version(ranged, "23.0.0").unavailable is None
    why = at_version(ranged, "19.9.0").unavailable
    assert why == (
        "gunicorn-gthread's command line is written for gunicorn >=20; 19.9.0 is outside it"
    )


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("waitress@x.y", "'x.y' is not a release number"),
        ("nginx-baseline@1.25.0", "has no release of its own to pin"),
        ("wsgiref@3.11", "has no release of its own to pin"),
        ("nosuch@1.0", "unknown server 'nosuch'"),
    ],
)
def test_bad_releases_are_refused_in_one_line(name: str, said: str):
    with pytest.raises(UsageError, match=said):
        get(name)


SEEDED = """
name = "seeded"
servers = ["nginx-baseline", "gunicorn-sync", "bjoern"]
seed_versions = { "gunicorn-sync" = "19.9.0" }
server_settings = { "gunicorn-sync" = { workers = 3 } }

[[load]]
name = "c"
model = "closed"
levels = [4]
duration_s = 1
"""


def test_versions_seed_runs_each_server_beside_its_seeds_release(tmp_path: Path):
    study_file = tmp_path / "seeded.toml"
    study_file.write_text(SEEDED)
    study, said = load_with(str(study_file), Overrides(versions="seed"))
    assert list(study.servers) == [
        "nginx-baseline",
        "gunicorn-sync",
        "gunicorn-sync@19.9.0",
        "bjoern",
    ]
    assert said == ["--versions seed (gunicorn-sync@19.9.0)"]
    # the release has its server's seed settings
    topo = build([0, 1], [(0,), (1,)], [(0, 1)])
    recipe = get("gunicorn-sync@19.9.0")
    assert place(study.loads[0], study, recipe, layout(topo), topo).workers == 3
    # a study without seed versions says so
    plain = tmp_path / "plain.toml"
    plain.write_text(SEEDED.replace('seed_versions = { "gunicorn-sync" = "19.9.0" }\n', ""))
    with pytest.raises(UsageError, match="names no seed_versions"):
        load_with(str(plain), Overrides(versions="seed"))
