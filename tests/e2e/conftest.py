"""Every test in this folder starts real processes (servers, the engine): each gets the e2e marker,
so `pytest -m "not e2e"` runs the unit layer alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from .procs import TAG_VAR, new_tag

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def own_tag(monkeypatch: pytest.MonkeyPatch) -> str:
    """A tag every process the test starts inherits (procs.py): its leftover checks look for
    these processes only, never for any process of a name on the machine."""
    tag = new_tag()
    monkeypatch.setenv(TAG_VAR, tag)
    return tag
