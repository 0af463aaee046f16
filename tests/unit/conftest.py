"""Unit tests start no process: anything that would is an end-to-end test (tests/e2e, marked e2e)."""

from __future__ import annotations

import subprocess

import pytest


@pytest.fixture(autouse=True)
def _no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a unit test started a process: {args[1:2]}; put it in tests/e2e")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
