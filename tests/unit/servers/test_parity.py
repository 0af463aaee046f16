"""The recipe parity check: two servers of a study may differ in a setting (loop, parser, threads,
keep-alive, backlog, access log) only where the study's `parity` table says so. On synthetic
audits first, then on every built-in study whose servers are all audited; the studies not yet
audited are named, so the list cannot shrink unseen."""

from __future__ import annotations

import pytest

from wsgibench.servers import get
from wsgibench.servers.parity import AUDITS, SETTINGS, Audit, undeclared
from wsgibench.study.model import builtin_names, load_study, read_raw, study_path

# Built-in studies whose compared servers are all audited: the check holds for each.
AUDITED_STUDIES = {"asgi", "wsgi-vs-asgi", "wsgi-vs-asgi-sleep"}


def test_an_undeclared_difference_fails_and_a_declared_one_does_not(monkeypatch):
    a = Audit("uvloop", "httptools", "tasks", "docs")
    b = Audit("asyncio", "httptools", "tasks", "docs", access_log="on")
    monkeypatch.setitem(AUDITS, "uvicorn", a)
    monkeypatch.setitem(AUDITS, "hypercorn", b)
    found = undeclared(["nginx-baseline", "uvicorn", "hypercorn"], {})
    assert len(found) == 2, found
    assert any(f.startswith("loop differs (uvicorn: uvloop, hypercorn: asyncio)") for f in found)
    assert any(f.startswith("access_log differs") for f in found)
    assert undeclared(["uvicorn", "hypercorn"], {"loop": "why", "access_log": "why"}) == []
    assert "not a setting" in undeclared(["uvicorn"], {"loops": "typo"})[0]


def test_a_server_without_an_audit_is_named():
    assert undeclared(["uvicorn", "waitress"], {}) == ["waitress: not audited (servers/parity.py)"]


def test_every_audit_names_a_real_recipe_and_every_setting():
    for name, audit in AUDITS.items():
        assert get(name).name == name
        assert all(audit.value(s) for s in SETTINGS) and audit.production


@pytest.mark.parametrize("name", sorted(AUDITED_STUDIES))
def test_built_in_studies_differ_only_where_they_declare(name: str):
    study = load_study(name)
    declared = read_raw(study_path(name)).get("parity", {})
    assert undeclared(list(study.servers), declared) == []


def test_the_audited_studies_are_those_whose_servers_all_have_an_audit():
    complete = set()
    for name in builtin_names():
        found = undeclared(list(load_study(name).servers), {k: "" for k in SETTINGS})
        if not found:
            complete.add(name)
    assert complete == AUDITED_STUDIES
