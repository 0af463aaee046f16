"""The recipe parity check: two servers of a study may differ in a setting (loop, parser,
concurrency, keep-alive, backlog, access log) only where the study's `parity` table says so. On
synthetic audits first, then on every built-in study; every listed server that can run has an
audit."""

from __future__ import annotations

import pytest

from wsgibench.servers import get, listed
from wsgibench.servers.parity import AUDITS, SETTINGS, Audit
from wsgibench.study.model import builtin_names, load_study, read_raw, study_path
from wsgibench.study.parity import compared, undeclared


def test_an_undeclared_difference_fails_and_a_declared_one_does_not(monkeypatch):
    a = Audit("uvloop", "httptools", "tasks", "docs")
    b = Audit("asyncio", "httptools", "tasks", "docs", logs_when_asked=True)
    monkeypatch.setitem(AUDITS, "uvicorn", a)
    monkeypatch.setitem(AUDITS, "hypercorn", b)
    servers = ["nginx-baseline", "uvicorn", "hypercorn"]
    (found,) = undeclared(servers, {})
    assert found.startswith("loop differs (uvicorn: uvloop, hypercorn: asyncio)"), found
    # a study that asks for an access log gets one from hypercorn here, none from uvicorn
    found = undeclared(servers, {}, access_log=True)
    assert any(f.startswith("access_log differs (uvicorn: off, hypercorn: on)") for f in found)
    assert undeclared(servers, {"loop": "why", "access_log": "why"}, access_log=True) == []
    assert "not a setting" in undeclared(["uvicorn"], {"loops": "typo"})[0]


def test_the_real_recipes_differ_in_the_access_log_when_a_study_asks_for_it():
    (found,) = undeclared(["gunicorn-gthread", "gunicorn-sync", "bjoern"], {
        "loop": "", "parser": "", "concurrency": "", "keep_alive": ""}, access_log=True)  # fmt: skip
    assert found.startswith("access_log differs (gunicorn-gthread: on, gunicorn-sync: on, bjoern")


def test_a_server_without_an_audit_is_named():
    found = undeclared(["uvicorn", "fault-crash"], {})
    assert found == ["fault-crash: not audited (servers/parity.py)"]


def test_every_audit_names_a_real_recipe_and_every_setting():
    for name, audit in AUDITS.items():
        assert get(name).name == name
        assert all(audit.value(s) for s in SETTINGS) and audit.production


@pytest.mark.parametrize("name", builtin_names())
def test_built_in_studies_differ_only_where_they_declare(name: str):
    study = load_study(name)
    declared = read_raw(study_path(name)).get("parity", {})
    assert undeclared(list(study.servers), declared, study.access_log) == []


def test_every_listed_server_that_can_run_is_audited():
    missing = [name for name in compared(list(listed())) if name not in AUDITS]
    assert missing == []
    assert "php-fpm-nginx" not in compared(list(listed()))  # a reference, compared to none


def test_the_doc_is_what_the_audit_writes():
    from pathlib import Path

    from wsgibench.servers.parity import audit_markdown

    doc = Path(__file__).resolve().parents[3] / "docs" / "parity.md"
    assert doc.read_text() == audit_markdown(), "regenerate docs/parity.md from audit_markdown()"
