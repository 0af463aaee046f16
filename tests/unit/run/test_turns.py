"""A level's cells take turns start by start, the order reversed each round (A B, B A, A B), and
each is given back (to be stored) as soon as it has no start left: one that ends early (a
disqualification) does not hold the others back, nor run again."""

from __future__ import annotations

from wsgibench.run.turns import take_turns


class FakeRun:
    """Starts `starts` times unless it ends after `ends_after` starts; every start logged."""

    def __init__(self, name: str, starts: int, log: list[str], ends_after: int | None = None):
        self.name, self.starts, self.log, self.ends_after = name, starts, log, ends_after
        self.done = 0

    def more(self) -> bool:
        return self.done < min(self.starts, self.ends_after or self.starts)

    def next_start(self) -> None:
        assert self.more(), f"{self.name} started once too often"
        self.log.append(f"{self.name}{self.done}")
        self.done += 1


def _turns(*runs: FakeRun) -> list[str]:
    log = runs[0].log
    for run in take_turns(runs):
        assert not run.more()
        log.append(f"{run.name} done")
    return log


def test_starts_alternate_and_the_order_reverses_each_round():
    log: list[str] = []
    a, b = FakeRun("A", 3, log), FakeRun("B", 3, log)
    assert _turns(a, b) == ["A0", "B0", "B1", "A1", "A2", "A done", "B2", "B done"]


def test_a_run_that_ends_early_is_given_back_at_once_and_the_rest_go_on():
    log: list[str] = []
    a, b, c = FakeRun("A", 2, log), FakeRun("B", 2, log, ends_after=1), FakeRun("C", 2, log)
    assert _turns(a, b, c) == [
        *("A0", "B0", "B done", "C0"),
        *("C1", "C done", "A1", "A done"),
    ]


def test_one_start_each_is_the_plain_order_each_stored_before_the_next_starts():
    log: list[str] = []
    assert _turns(FakeRun("A", 1, log), FakeRun("B", 1, log)) == ["A0", "A done", "B0", "B done"]


def test_a_run_with_nothing_to_start_is_given_back_without_a_start():
    log: list[str] = []
    assert _turns(FakeRun("A", 0, log), FakeRun("B", 1, log)) == ["A done", "B0", "B done"]
