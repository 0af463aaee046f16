"""Other work on the server's and the engine's CPUs: the tick accounting's error that moves one
set's busy time to the other is not read as contention, and real other work still is."""

from __future__ import annotations

import pytest

from wsgibench.machine.cpustat import CpuTimes
from wsgibench.run.records import interference_record

WALL = 2.12  # seconds: a capacity step's repeat


def _use(cpu0: float, cpu1: float, server: float, engine: float, cpus=([0], [1])):
    """A repeat whose CPUs were busy cpu0 and cpu1 of the wall time by their ticks, the server's
    and the engine's own (exact) CPU time being `server` and `engine` of it."""
    before = CpuTimes({0: 0.0, 1: 0.0}, {0: 0.0, 1: 0.0})
    after = CpuTimes({0: cpu0 * WALL, 1: cpu1 * WALL}, {0: 0.0, 1: 0.0})
    return interference_record(
        before, after, WALL, cpus[0], server * WALL, cpus[1], engine * WALL, 0.0, 0.0, engine
    )


def test_ticks_moved_from_the_engines_cpu_to_the_servers_are_not_contention():
    # bjoern at 128,000 requests/s, open loop (measured on the 2-CPU machine): CPU 0 counted
    # 90.3 % busy for a server whose own time was 76.3 %; CPU 1 57.4 % for an engine of 69.0 %.
    use = _use(0.903, 0.574, 0.763, 0.690)
    assert use.contended is None
    missed = 69.0 - 57.4 - use.resolution_pct["engine"]
    assert use.unticked_pct == {"server": 0.0, "engine": pytest.approx(missed, abs=0.01)}
    assert use.server.other_pct == pytest.approx(90.3 - 76.3 - missed, abs=0.01)
    assert use.engine.other_pct == 0.0


def test_other_work_beyond_what_the_other_cpu_missed_is_still_contention():
    # The same repeat with a neighbour's 15 % more on CPU 0: 29 % over the server's own time,
    # of which at most the engine's missed 8 % (beyond the resolution) can be the ticks' error.
    use = _use(0.903 + 0.15, 0.574, 0.763, 0.690)
    assert use.contended is not None and use.contended.startswith("server CPUs (0,)")
    assert use.server.other_pct > 5 + use.resolution_pct["server"]


def test_nothing_is_moved_when_the_engine_counted_what_it_used():
    # CPU 1's ticks saw all of the engine: CPU 0's 14 % over the server is other work.
    use = _use(0.903, 0.690, 0.763, 0.690)
    assert use.unticked_pct == {"server": 0.0, "engine": 0.0}
    assert use.contended is not None and use.server.other_pct == pytest.approx(14.0, abs=0.01)


def test_nothing_is_moved_between_sets_that_share_a_cpu():
    use = _use(0.903, 0.574, 0.763, 0.690, cpus=([0, 1], [1]))
    assert use.unticked_pct == {"server": 0.0, "engine": 0.0}


def test_a_missed_share_within_the_resolution_moves_nothing():
    # 2 % of the engine's own time not ticked is within the sampling's error over 2.12 s.
    use = _use(0.76, 0.67, 0.763, 0.690)
    assert use.unticked_pct["engine"] == 0.0 and use.contended is None
