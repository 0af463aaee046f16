"""The CPU-speed sampler: the spread of its samples, a real (short) sampling pinned and unpinned,
and doctor's verdict on it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wsgibench.machine import doctor, steadiness
from wsgibench.machine.steadiness import Steadiness, deciles, measure, spread


def test_spread_is_the_90th_percentile_over_the_10th():
    rates = [100.0] * 8 + [50.0, 200.0]  # one slow and one fast sample among steady ones
    low, high = deciles(rates)
    assert 50 < low <= 100 and 100 <= high < 200
    assert spread(rates) == pytest.approx(high / low - 1)
    assert spread([100.0] * 12) == 0.0
    assert spread([]) == 0.0 and spread([80.0]) == 0.0


def test_a_machine_whose_speed_moves_by_half_is_not_steady():
    moving = Steadiness(0, (200.0, 300.0) * 6)
    assert moving.spread == pytest.approx(0.5)
    assert "cpu0: 50% between samples (200-300 MiB/CPU-s" in moving.describe()
    assert Steadiness(None, ()).describe() == "this CPU: not measured"


def _running_on() -> int:
    """The CPU this thread runs on now, as the kernel says (/proc/thread-self/stat, field 39)."""
    stat = Path("/proc/thread-self/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[36])


def test_measure_pins_the_thread_and_restores_its_cpus(monkeypatch):
    before = os.sched_getaffinity(0)
    cpu = max(before)  # not the lowest: an unpinned thread is often there already
    seen: list[tuple[set[int], int]] = []
    sample = steadiness._sample

    def watched(seconds: float) -> float:
        rate = sample(seconds)
        seen.append((os.sched_getaffinity(0), _running_on()))  # while the sample ran
        return rate

    monkeypatch.setattr(steadiness, "_sample", watched)
    measured = measure(cpu, samples=3, sample_s=0.01)
    # every sample ran with this thread's mask held to that CPU alone, and on it
    assert seen == [({cpu}, cpu)] * 3, seen
    assert measured.cpu == cpu
    assert len(measured.rates) == 3 and all(r > 0 for r in measured.rates)
    assert os.sched_getaffinity(0) == before
    # a CPU this process may not use: measured where it runs, said as not pinned
    seen.clear()
    unpinned = measure(max(before) + 1000, samples=2, sample_s=0.01)
    assert unpinned.cpu is None and os.sched_getaffinity(0) == before
    assert [mask for mask, _ in seen] == [before] * 2


@pytest.mark.parametrize(("rates", "ok"), [((250.0,) * 12, True), ((200.0, 300.0) * 6, False)])
def test_doctor_says_whether_the_cpu_is_steady(monkeypatch, rates, ok):
    monkeypatch.setattr(steadiness, "measure", lambda cpu: Steadiness(cpu, rates))
    found = doctor.check_steadiness(0)
    assert found.ok is ok and found.name == "CPU speed between samples"
    assert ("50% between samples" in found.value) is not ok


def test_only_the_doctor_command_samples_the_cpu(monkeypatch):
    sampled: list[int] = []
    monkeypatch.setattr(
        steadiness, "measure", lambda cpu: sampled.append(cpu) or Steadiness(cpu, (1.0,))
    )
    monkeypatch.setattr(doctor, "check_cgroup", lambda: doctor.Finding("c", "", "", True, ""))
    names = [f.name for f in doctor.findings()]
    assert "CPU speed between samples" not in names and sampled == []
    names = [f.name for f in doctor.findings(steady=True)]
    assert "CPU speed between samples" in names and len(sampled) == 1
