"""The sampler against what really happened: this process burning a known CPU time (its own thread
clock) between two samples, its connections and its memory as /proc shows them; the
timeline's CPU shares adding up to the CPU seconds it reports; the cgroup readings kept beside;
and the cgroup CPU between two instants interpolated from the readings that bracket them. CPU
seconds, not wall time, are compared, so a busy machine slows this test but does not fail it."""

from __future__ import annotations

import math
import os
import socket
import time
from itertools import count

import psutil
import pytest

from wsgibench.machine import sampler as sampler_mod
from wsgibench.machine.sampler import CgroupReading, Sampler, cpu_between, established_on_port


def _reading(t: float, cpu: float) -> CgroupReading:
    return CgroupReading(t, t, cpu)


def test_cgroup_cpu_between_two_instants_is_interpolated_within_the_readings():
    readings = [_reading(10.0, 1.0), _reading(12.0, 3.0), _reading(14.0, 3.5)]
    assert cpu_between(readings, 10.5, 11.5) == pytest.approx(1.0)
    assert cpu_between(readings, 11.0, 13.0) == pytest.approx(3.25 - 2.0)
    assert cpu_between(readings, 9.8, 14.2) == pytest.approx(2.5)  # 0.2 s either side: the ends
    assert cpu_between(readings, 9.7, 12.0) is None  # before the first reading
    assert cpu_between(readings, 10.0, 14.3) is None  # after the last
    assert cpu_between(readings[:1], 10.0, 10.0) is None
    same = [_reading(10.0, 1.0), _reading(10.0, 2.0), _reading(11.0, 2.0)]
    assert cpu_between(same, 10.0, 11.0) == pytest.approx(1.0)  # two readings at one instant


def test_the_proc_fallback_counts_what_sock_diag_counts(monkeypatch):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        accepted = [server.accept()[0] for _ in clients]
        try:
            direct = established_on_port(port)

            def refused(_port: int) -> int:
                raise PermissionError(1, "netlink refused")

            monkeypatch.setattr(sampler_mod.sockdiag, "established_on_port", refused)
            assert direct == established_on_port(port) == 3
            assert established_on_port(port + 1 if port < 65535 else port - 1) == 0
        finally:
            for s in clients + accepted:
                s.close()


def _vm_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        line = next(x for x in f if x.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def _burn(cpu_s: float) -> float:
    """This thread's CPU seconds spent spinning for `cpu_s` of them."""
    start = time.thread_time()
    while time.thread_time() - start < cpu_s:
        pass
    return time.thread_time() - start


def test_the_timeline_holds_the_cpu_burned_between_its_samples_and_the_connections():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    links = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
    links += [server.accept()[0] for _ in range(2)]
    cgroup = count(7)
    own = psutil.Process()
    sampler = Sampler(lambda: [own], port, cgroup_cpu=lambda: float(next(cgroup)))
    try:
        before = os.times()
        sampler.start()
        burned = _burn(0.4)
        samples = sampler.stop()
        after = os.times()
        rss_now = _vm_rss(os.getpid())
    finally:
        server.close()
        for s in links:
            s.close()
    used = (after.user + after.system) - (before.user + before.system)  # the whole process's
    assert burned - 0.02 <= sampler.tree_cpu_s <= used + 0.02, (burned, sampler.tree_cpu_s, used)
    shares = sum(
        b.cpu_pct * (b.t_s - a.t_s) / 100 for a, b in zip(samples, samples[1:], strict=False)
    )
    assert samples[0].cpu_pct == 0.0 and math.isclose(shares, sampler.tree_cpu_s, rel_tol=1e-6)
    assert all(s.processes == 1 for s in samples)
    assert abs(samples[-1].rss_bytes - rss_now) <= 4 * 2**20
    assert samples[0].conns == samples[-1].conns == 2  # the server side of the two links
    assert samples[-1].load1 == pytest.approx(os.getloadavg()[0], abs=1.0)
    assert all((s.conns is None) == (s.load1 is None) for s in samples)
    every = [s for s in samples[1:-1] if s.conns is not None]
    assert len(every) == (len(samples) - 2) // sampler_mod.CONNS_EVERY
    assert [r.cpu_s for r in sampler.cgroup] == [7.0 + i for i in range(len(samples))]
    assert sampler.cgroup_cpu_s == len(samples) - 1
    assert 0 < sampler.own_cpu_s < used - burned + 0.02  # the sampler's thread, not the burn
    assert Sampler(lambda: [], port).cgroup_cpu_s is None
