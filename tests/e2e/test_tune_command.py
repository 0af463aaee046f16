"""The command line `tune` prints for its best setting runs as printed: from the app's folder,
with `venv/` a venv of the server's packages (here the server's own, which the trials ran), in an
environment that holds nothing else, it serves the app. Servers run by their own command line
(gunicorn, uWSGI, Granian, uvicorn, Daphne), launcher-run servers by theirs where they have one
(waitress-serve, cheroot), and the others by wsgibench's launcher (bjoern, Hypercorn), whose line
once lacked the launcher's kit on its path."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from wsgibench.machine.process import free_port
from wsgibench.run.serve import server_python
from wsgibench.run.tune import Setting
from wsgibench.run.tune_command import command_line
from wsgibench.study.apps import APPS

from .helpers import require

SERVERS = [
    "gunicorn-gthread",
    "uwsgi-http11",
    "granian",
    "uvicorn",
    "daphne",
    "waitress",
    "cheroot",
    "bjoern",
    "hypercorn",
]


def _argv_and_env(line: str, venv: Path) -> tuple[list[str], dict[str, str]]:
    """The printed line's words with `venv/` made the server's venv, and its VAR=value prefix."""
    words = shlex.split(line)
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root")}
    while words and "=" in words[0] and not words[0].startswith(("venv/", "/")):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    argv = [str(venv / w.removeprefix("venv/")) if w.startswith("venv/") else w for w in words]
    return argv, env


def _answer(port: int, deadline: float) -> str:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/ping", timeout=2) as reply:
                return reply.read().decode()
        except OSError:
            time.sleep(0.2)
    return ""


@pytest.mark.parametrize("name", SERVERS)
def test_the_printed_command_line_serves_the_app(name: str):
    recipe = require(name)
    python = server_python(recipe)
    assert python is not None
    port = free_port()
    printed = command_line(Setting(name, 1, 2), APPS["pong"], host="127.0.0.1", port=port)
    line = printed.splitlines()[-1]
    argv, env = _argv_and_env(line, python.parent.parent)
    proc = subprocess.Popen(
        argv,
        cwd=APPS["pong"].folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        body = _answer(port, time.monotonic() + 30)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        out = proc.communicate(timeout=10)[0].decode(errors="replace")
    assert body == "Pong!", f"{printed}\n{out[-2000:]}"
