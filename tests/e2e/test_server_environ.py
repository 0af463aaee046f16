"""A server started from a shell left in Python's development mode (and -O, and a PYTHONPATH of its
own) runs without them, as it would in production; a study that sets one in its app_env gets it.
The app's every reply says which mode it ran in and whether the shell's folder was on its path,
and the study's rule judges it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from wsgibench.results.engine_result import EngineResult
from wsgibench.results.store import Store

from .helpers import cli, expect_measured, require

APP = """
import sys
def app(environ, start_response):
    shell = int(any(p.endswith("shellpath") for p in sys.path))
    body = f"dev={int(sys.flags.dev_mode)} O={sys.flags.optimize} shell={shell}".encode()
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]
"""


def _measured(tmp_path: Path, name: str, body: str, app_env: str = "") -> None:
    (tmp_path / f"{name}.toml").write_text(
        f'servers = ["waitress"]\napp = "flags.py:app"\nrepeats = 1\n{app_env}\n'
        f'[[requests]]\nname = "r"\npath = "/"\nexpect = {{ status = 200, body = "{body}" }}\n'
        '[[load]]\nname = "c"\nmodel = "closed"\nlevels = [2]\nduration_s = 0.5\n'
    )
    argv = cli("run", f"{name}.toml", "--results", f"{name}.sqlite", "--no-report", "--no-install")
    shell = {
        **os.environ,
        "PYTHONDEVMODE": "1",
        "PYTHONOPTIMIZE": "1",
        "PYTHONPATH": str(tmp_path / "shellpath"),
    }
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=shell
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    store = Store(tmp_path / f"{name}.sqlite", read_only=True)
    (cell,) = store.cells(store.study(None)["id"])
    expect_measured(cell, name)
    (row,) = store.repeats(cell.id)
    totals = EngineResult.from_dict(json.loads(row["engine_json"])).totals
    assert totals.ok > 0 and totals.error_count == 0, (name, totals)


def test_the_shells_development_mode_does_not_reach_the_server(tmp_path: Path):
    require("waitress")
    (tmp_path / "flags.py").write_text(APP)
    (tmp_path / "shellpath").mkdir()
    _measured(tmp_path, "plain", "dev=0 O=0 shell=0")
    _measured(tmp_path, "asked", "dev=1 O=0 shell=0", 'app_env = { PYTHONDEVMODE = "1" }')


def test_a_studys_own_pythonpath_reaches_the_import_check_and_the_server(tmp_path: Path):
    # The shell's PYTHONPATH does not reach a server; a study that names one in its app_env
    # (shared code outside the app's folder) gets it, in the check before the first cell too.
    require("waitress")
    (tmp_path / "libs").mkdir()
    (tmp_path / "libs" / "shared.py").write_text("WORD = 'shared'\n")
    (tmp_path / "flags.py").write_text(
        "import shared\n"
        "def app(environ, start_response):\n"
        "    body = shared.WORD.encode()\n"
        "    start_response('200 OK', [('Content-Length', str(len(body)))])\n"
        "    return [body]\n"
    )
    _measured(tmp_path, "libs", "shared", f'app_env = {{ PYTHONPATH = "{tmp_path / "libs"}" }}')
