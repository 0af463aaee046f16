"""Every test in this folder starts real processes (servers, the engine): each gets the e2e marker,
so `pytest -m "not e2e"` runs the unit layer alone."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
