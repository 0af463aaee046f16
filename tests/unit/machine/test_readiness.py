"""Waiting for a starting server: ready, gone, settled on a wrong answer, or out of time, each
said with what the server answered last."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from wsgibench.errors import StartupError
from wsgibench.machine import process
from wsgibench.machine.process import Probed, RunningServer


class _Alive(RunningServer):
    def dead(self) -> str | None:
        return None


def _server(tmp_path: Path) -> RunningServer:
    log = tmp_path / "server.log"
    log.write_text("")
    server = _Alive("127.0.0.1", 1, tmp_path, cgroup=None)  # type: ignore[arg-type]
    server.started.append(process.Started(None, None, log))  # type: ignore[arg-type]
    return server


def test_a_final_wrong_answer_kept_for_the_settle_time_ends_the_wait(tmp_path, monkeypatch):
    monkeypatch.setattr(process, "SETTLED_S", 0.2)
    nope = Probed(False, "status 404, body b'not here'", final=True)
    with pytest.raises(StartupError, match=r"^no reply on /: it answered status 404, body .* for"):
        process._wait(_server(tmp_path), lambda: nope, 30.0, "reply on /")


def test_an_answer_that_may_change_waits_out_the_timeout_and_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(process, "SETTLED_S", 0.05)
    busy = Probed(False, "status 502", final=False)  # a proxy before its upstream is up
    with pytest.raises(StartupError, match=r"within 0 s \(its last answer: status 502\)"):
        process._wait(_server(tmp_path), lambda: busy, 0.3, "reply on /")
    quiet = Probed(False)  # nothing answered yet: the message is as before
    with pytest.raises(StartupError, match=r"^no reply on / within 0 s: "):
        process._wait(_server(tmp_path), lambda: quiet, 0.2, "reply on /")


def test_a_server_that_becomes_ready_after_wrong_answers_is_ready(tmp_path, monkeypatch):
    monkeypatch.setattr(process, "SETTLED_S", 10.0)
    answers = itertools.chain(
        [Probed(False), Probed(False, "status 404", True), Probed(False, "status 503")],
        itertools.repeat(Probed(True)),
    )
    process._wait(_server(tmp_path), lambda: next(answers), 30.0, "reply on /")
    tcp = iter([Probed(False), Probed(False), Probed(True)])  # an upstream's port, then open
    process._wait(_server(tmp_path), lambda: next(tcp), 30.0, "upstream on port 1")
