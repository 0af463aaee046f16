"""Waiting for a starting server: ready, gone, settled on a wrong answer, or out of time, each
said with what the server answered last."""

from __future__ import annotations

from collections.abc import Callable
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


class _Clock:
    """The wait's clock: each sleep moves it on, nothing else does."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _asking(answers: list[Probed], clock: _Clock) -> tuple[list[float], Callable[[], Probed]]:
    asked: list[float] = []

    def look() -> Probed:
        asked.append(clock.now)
        return answers[len(asked) - 1]

    return asked, look


def test_a_server_that_becomes_ready_after_wrong_answers_is_ready(tmp_path, monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(process, "time", clock)
    monkeypatch.setattr(process, "SETTLED_S", 1.0)
    # A final 404 for 0.9 s (under the settle time), a 503 that may change, the 404 again for
    # 0.9 s (its time counts afresh: it changed in between), then the app is ready.
    not_found, busy = Probed(False, "status 404", True), Probed(False, "status 503")
    answers = [Probed(False), *[not_found] * 19, busy, *[not_found] * 19, Probed(True)]
    asked, look = _asking(answers, clock)
    process._wait(_server(tmp_path), look, 30.0, "reply on /")
    assert len(asked) == len(answers)  # asked until ready, and not once more
    assert asked[-1] == pytest.approx(0.05 * (len(answers) - 1))
    # an upstream's port: closed twice, then open
    clock.now = 0.0
    asked, look = _asking([Probed(False), Probed(False), Probed(True)], clock)
    process._wait(_server(tmp_path), look, 30.0, "upstream on port 1")
    assert asked == pytest.approx([0.0, 0.05, 0.1])
