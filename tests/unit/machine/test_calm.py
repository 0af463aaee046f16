"""The wait for calm CPUs before a capacity step is run again: it ends at the first calm sample,
is bounded, and says what it saw."""

from __future__ import annotations

from wsgibench.machine.calm import wait_until_calm
from wsgibench.machine.cpustat import CpuTimes


class FakeMachine:
    """/proc/stat of two CPUs whose steal (and busy) time per 0.5 s sample is given in turn; a
    clock that the wait's sleeps move."""

    def __init__(self, samples: list[tuple[float, float]]):
        self.samples = samples  # (steal s, busy s) of CPU 0 in each sample
        self.now, self.steal, self.busy, self.sleeps = 100.0, 0.0, 0.0, 0

    def read(self) -> CpuTimes:
        return CpuTimes({0: self.busy, 1: 0.0}, {0: self.steal, 1: 0.0})

    def sleep(self, s: float) -> None:
        steal, busy = self.samples[min(self.sleeps, len(self.samples) - 1)]
        self.steal, self.busy = self.steal + steal, self.busy + busy
        self.now += s
        self.sleeps += 1

    def clock(self) -> float:
        return self.now


def _wait(machine: FakeMachine, limit_s: float = 10.0):
    return wait_until_calm(
        [0, 1], limit_s, 0.5, read=machine.read, sleep=machine.sleep, clock=machine.clock
    )


def test_a_calm_machine_costs_one_sample():
    machine = FakeMachine([(0.0, 0.01)])  # 1 % of two CPUs busy
    got = _wait(machine)
    assert got.calm and machine.sleeps == 1 and got.waited_s == 0.5
    assert got.busy_pct == 1.0 and got.steal_pct == 0.0
    assert got.describe() == (
        "waited 0.5 s for its CPUs to be calm (steal 0.0 %, busy 1.0 % of CPUs 0, 1 in the last "
        "sample)"
    )


def test_the_wait_lasts_while_the_hypervisor_steals_and_ends_when_it_stops():
    # 10 % of the two CPUs stolen (0.1 s of 1 CPU-s), twice, then 2 %: calm at the third sample.
    machine = FakeMachine([(0.1, 0.0), (0.1, 0.0), (0.02, 0.0)])
    got = _wait(machine)
    assert got.calm and machine.sleeps == 3 and got.waited_s == 1.5
    assert round(got.steal_pct, 6) == 2.0


def test_someone_elses_work_is_not_calm_either():
    machine = FakeMachine([(0.0, 0.5), (0.0, 0.0)])  # half the CPUs busy, then idle
    got = _wait(machine)
    assert got.calm and machine.sleeps == 2


def test_the_wait_is_bounded_and_says_it_ran_again_anyway():
    machine = FakeMachine([(0.08, 0.0)])  # 8 % stolen in every sample
    got = _wait(machine, limit_s=3.0)
    assert not got.calm and machine.sleeps == 6 and got.waited_s == 3.0
    assert got.describe() == (
        "its CPUs were not calm within 3.0 s (steal 8.0 %, busy 0.0 % of CPUs 0, 1 in the last "
        "sample); run again anyway"
    )
