"""Every available catalog entry starts on OS-picked ports, answers pong, and leaves nothing behind."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from wsgibench.run import checks as _checks
from wsgibench.run.serve import ServeOptions, start
from wsgibench.servers import listed

from .helpers import cli, require

# The listed entries (the hidden fault servers misbehave on purpose: tests/e2e/test_faults.py)
RUNNABLE = [r.name for r in listed().values() if not r.unavailable]


@pytest.mark.parametrize("name", RUNNABLE)
def test_serves_pong_and_stops_cleanly(name):
    recipe = require(name)
    server, workdir = start(recipe, ServeOptions())
    try:
        caps = _checks.check(server.host, server.port)
        assert caps.pong, caps.detail
        assert caps.http10, caps.detail
        procs = server.processes()
        assert procs
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    assert [p.pid for p in procs if p.is_running() and p.status() != "zombie"] == []


def test_servers_lists_each_servers_interface():
    """`wsgibench servers` through the installed script: each server with its interface."""
    result = subprocess.run(
        cli("servers"),
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    cells = [line.split("│") for line in result.stdout.splitlines() if line.count("│") > 3]
    interface = {row[1].strip(): row[2].strip() for row in cells}
    assert interface["waitress"] == "WSGI" and interface["uvicorn"] == "ASGI"
    assert interface["granian-rsgi"] == "native (RSGI)"
    assert interface["tornado-native-sync"] == "native (tornado handlers)"
