"""Judging order and the statuses that are not a clean measurement: the engine's and the
machine's limits are judged before the server's errors; contended cells, worker deaths and limits
that stopped holding, each said with its reason."""

from __future__ import annotations

from dataclasses import dataclass, field

from wsgibench.machine.deathwatch import Deaths, Exit

from .fakes import FakeServer, result
from .test_judging import _codes, _measure


@dataclass
class FakeWatch:
    """Reports, for each repeat in turn, the exits given (none once they run out)."""

    per_repeat: list[list[Exit]]
    calls: list[int] = field(default_factory=lambda: [0])

    def __call__(self, _server) -> FakeWatch:
        return self

    def start(self) -> None:
        pass

    def stop(self) -> Deaths:
        i = self.calls[0]
        self.calls[0] += 1
        exits = self.per_repeat[i] if i < len(self.per_repeat) else []
        return Deaths(list(exits), len(exits), "test")


def _timeline(resent_at: dict[int, int], reset_at: dict[int, int], seconds: int = 5):
    return [
        {
            "t_s": t,
            "completed": 1000,
            "ok": 1000,
            "errors": {"reset": reset_at[t]} if t in reset_at else {},
            "resent": resent_at.get(t, 0),
            "open_connections": 10,
            "p50_us": 1000,
            "p99_us": 2000,
        }
        for t in range(seconds)
    ]


def test_errors_under_an_engine_at_its_limit_are_not_the_servers_verdict(tmp_path):
    # Judging order: the engine's limit first. 10 % timeouts with the engine out of descriptors
    # could be the server's or the pile-up's: the repeat is invalid, and says both.
    piled = result(
        ok=900,
        errors={"timeout": 100, "fd_limit": 300},
        saturated=True,
        reasons=("engine hit its file-descriptor limit (1024) 300 times",),
    )
    outcome, _ = _measure(tmp_path, [piled])
    assert outcome.status == "invalid"
    assert outcome.reason.startswith(
        "load generator was the bottleneck: engine hit its file-descriptor limit (1024) 300 "
        "times; the server's errors (10.0%: timeout 100) came with it"
    )


def test_wrong_replies_over_the_threshold_disqualify_even_with_the_engine_at_its_limit(tmp_path):
    # A starved or lagging engine makes requests late, never their replies wrong or the server's
    # resets: those over the threshold are the server's verdict, the engine's limit said beside.
    for errors in ({"bad_body": 900}, {"reset": 990, "timeout": 5}):
        wrong = result(
            ok=10,
            errors=errors,
            saturated=True,
            reasons=("schedule lag p99 250000 us > 10000 us",),
        )
        outcome, _ = _measure(tmp_path, [wrong])
        assert outcome.status == "disqualified", (errors, outcome.reason)
        assert outcome.reason.startswith("error rate "), outcome.reason
        assert "judged before the load's own limit, which cannot cause them: schedule lag" in (
            outcome.reason
        )
    # timeouts alone stay unattributable while the engine lagged
    late = result(
        ok=10, errors={"timeout": 900}, saturated=True, reasons=("schedule lag p99 1 us > 0 us",)
    )
    outcome, _ = _measure(tmp_path, [late])
    assert outcome.status == "invalid", outcome.reason


def test_timeouts_over_the_threshold_while_the_engine_lagged_are_invalid_not_disqualified(
    tmp_path,
):
    # The case: 3.3 % timeouts, threshold 3 %, the engine's schedule 250 ms behind.
    lagging = result(
        ok=9_670,
        errors={"timeout": 330},
        saturated=True,
        reasons=("schedule lag p99 250000 us > 10000 us",),
        plan={"model": {"kind": "rate", "rate": 1000, "duration_s": 10}},
    )
    outcome, _ = _measure(tmp_path, [lagging], threshold=0.03)
    assert outcome.status == "invalid"
    assert "schedule lag p99 250000 us" in outcome.reason
    assert "the server's errors, 3.3%, are not judged" in outcome.reason


def test_worker_deaths_are_counted_named_and_never_a_clean_measurement(tmp_path):
    # Two workers exit during repeat 2 (one with status 1 at second 1, one killed at second 3),
    # a third is killed by the server's own timeout in repeat 3 (its log names it). The engine
    # re-sent 40 requests and saw 5 resets around those seconds, 7 re-sends far from them.
    start = 1000.0
    engine = result(
        ok=10_000,
        mean_us=1000,
        errors={"reset": 5},
        elapsed_s=5.0,
        started_unix_s=start,
        totals={"unannounced_closes": 47, "resent": 47},
        connections=60,
        timeline=_timeline({1: 30, 3: 10}, {3: 5}, seconds=5) + _timeline({}, {}, 0),
    )
    far = result(
        ok=10_000,
        mean_us=1000,
        elapsed_s=5.0,
        started_unix_s=start,
        timeline=_timeline({0: 7}, {}, seconds=1),
    )
    watch = FakeWatch(
        [
            [],
            [Exit(41, start + 1.2, 1, None), Exit(42, start + 3.5, None, 9)],
            [Exit(43, start + 0.5, None, 9)],
        ]
    )
    server = FakeServer(log_text="[CRITICAL] WORKER TIMEOUT (pid:43)")
    outcome, _ = _measure(tmp_path, [far, engine, engine], watch=watch, server=server)
    assert outcome.status == "worker-deaths"
    assert outcome.reason.startswith("2 worker processes died during repeat 2: ")
    assert "1 exit status 1" in outcome.reason and "1 killed by SIGKILL" in outcome.reason
    # lost with them: the re-sends and resets of seconds 0-4 around deaths at 1 and 3
    assert "45 requests lost with them (40 the engine re-sent" in outcome.reason
    second = outcome.repeats[1]
    assert second.counters.worker_deaths["count"] == 2
    assert second.errors == 5 + 40  # the re-sent requests lost with the workers are errors
    third = outcome.repeats[2].counters.worker_deaths
    assert third["exits"][0]["how"] == "killed by the server's own worker timeout"
    codes = _codes(outcome)
    assert "worker-deaths" in codes
    # deaths are never read as a keep-alive policy
    assert not codes & {"closes-after-n", "unannounced-close"}


def test_a_limit_changed_during_a_repeat_makes_the_cell_invalid(tmp_path):
    server = FakeServer(
        limit_change="memory limit no longer holds: asked for memory.max=536870912, the group "
        "holds 1073741824"
    )
    outcome, _ = _measure(tmp_path, [result(ok=10_000, mean_us=1000)], server=server)
    assert outcome.status == "invalid"
    assert outcome.reason == (
        "memory limit no longer holds: asked for memory.max=536870912, the group holds "
        "1073741824 (after repeat 1)"
    )


def test_many_resends_flag_the_cell(tmp_path):
    closes = result(
        ok=10_000, mean_us=1000, connections=400, totals={"unannounced_closes": 300, "resent": 300}
    )
    outcome, _ = _measure(tmp_path, [closes])
    assert "many-resends" in _codes(outcome)
    said = next(d for d in outcome.diagnoses if d["code"] == "many-resends")["message"]
    assert said.startswith("300 requests (3.0% of those sent) were re-sent")
