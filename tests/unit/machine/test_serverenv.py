"""A server does not inherit the shell's Python debug settings or code paths; everything else it
does."""

from __future__ import annotations

from wsgibench.machine.doctor import check_python_settings
from wsgibench.machine.serverenv import DROPPED, dropped, server_environ


def test_debug_settings_are_left_out_and_named():
    shell = {"PATH": "/usr/bin", "PYTHONDEVMODE": "1", "PYTHONMALLOC": "debug", "LANG": "C.UTF-8"}
    assert server_environ(shell) == {"PATH": "/usr/bin", "LANG": "C.UTF-8"}
    assert dropped(shell) == ["PYTHONDEVMODE=1", "PYTHONMALLOC=debug"]
    kept = {"PYTHONHASHSEED": "0", "PYTHONUNBUFFERED": "1", "VIRTUAL_ENV": "/v"}
    assert server_environ(kept) == kept and dropped(kept) == []
    paths = {"PYTHONPATH": "/src/gunicorn", "PYTHONPYCACHEPREFIX": "/tmp/pyc", "HOME": "/h"}
    assert server_environ(paths) == {"HOME": "/h"}
    assert dropped(paths) == ["PYTHONPATH=/src/gunicorn", "PYTHONPYCACHEPREFIX=/tmp/pyc"]


def test_doctor_names_them(monkeypatch):
    monkeypatch.setenv("PYTHONASYNCIODEBUG", "1")
    found = check_python_settings()
    assert found.ok and "PYTHONASYNCIODEBUG=1" in found.value
    monkeypatch.delenv("PYTHONASYNCIODEBUG")
    for key in DROPPED:
        monkeypatch.delenv(key, raising=False)
    assert check_python_settings().value.startswith("none")
