"""Every available catalog entry starts on OS-picked ports, answers pong, and leaves nothing behind."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from wsgibench.cli.main import cli
from wsgibench.run import checks as _checks
from wsgibench.run.serve import ServeOptions, start
from wsgibench.servers import listed

from .helpers import require

# The listed entries (the hidden fault servers misbehave on purpose: tests/e2e/test_faults.py)
RUNNABLE = [r.name for r in listed().values() if not r.unavailable]


def test_catalog_has_every_seed_server():
    names = set(listed())
    assert len(names) >= 30
    unavailable = {r.name: r.unavailable for r in listed().values() if r.unavailable}
    for seed_only in (
        "fapws3",
        "aspen",
        "magnumpy",
        "cogen",
        "concurrence",
        "eurasia",
        "nginx-unit",
    ):
        assert unavailable.get(seed_only), seed_only


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
    result = CliRunner().invoke(cli, ["servers"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    cells = [line.split("│") for line in result.output.splitlines() if line.count("│") > 3]
    interface = {row[1].strip(): row[2].strip() for row in cells}
    assert interface["waitress"] == "WSGI" and interface["uvicorn"] == "ASGI"
    assert interface["granian-rsgi"] == "native (RSGI)"
    assert interface["tornado-native-sync"] == "native (tornado handlers)"
