"""The sampler against what really happened: this process burning a known CPU time (its own thread
clock) between two samples, its connections and its memory as /proc shows them; the
timeline's CPU shares adding up to the CPU seconds it reports; the cgroup readings kept beside;
and the cgroup CPU between two instants interpolated from the readings that bracket them. CPU
seconds, not wall time, are compared, so a busy machine slows this test but does not fail it."""

from __future__ import annotations

import contextlib
import math
import os
import socket
import threading
import time
from itertools import count
from types import SimpleNamespace

import psutil
import pytest

from wsgibench.machine import sampler as sampler_mod
from wsgibench.machine.sampler import (
    CgroupReading,
    Sample,
    Sampler,
    cpu_between,
    established_on_port,
)


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
    assert cpu_between(readings[:2], 10.0, 12.0) == pytest.approx(2.0)  # two are enough
    same = [_reading(10.0, 1.0), _reading(10.0, 2.0), _reading(11.0, 2.0)]
    assert cpu_between(same, 10.0, 11.0) == pytest.approx(1.0)  # two readings at one instant


@pytest.mark.parametrize("family, host", [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")])
def test_the_proc_fallback_counts_what_sock_diag_counts(monkeypatch, family, host):
    with socket.socket(family) as server:
        server.bind((host, 0))
        server.listen(8)
        port = server.getsockname()[1]
        clients = [socket.create_connection((host, port)) for _ in range(3)]
        accepted = [server.accept()[0] for _ in clients]
        try:
            # sock_diag asked of the socket's family (the sampler asks IPv4's: servers listen on
            # 127.0.0.1), and the /proc fallback, which reads both families' tables
            direct = sampler_mod.sockdiag.established_on_port(port, (family,))

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


def _named_wait(done: threading.Event) -> None:
    """Name this thread as the kernel shows it (its comm), then wait to be told to end."""
    with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as f:
        f.write("brief-worker")
    done.wait()


def _burn_beside_a_brief_thread(sampler: Sampler) -> float:
    """Burn 0.4 s of this thread's CPU (returned) while a thread born after the sampler's start
    lives until the tick-11 sample exists: seen by the re-listing at tick 10 only."""
    done = threading.Event()
    brief = threading.Thread(target=_named_wait, args=(done,))
    brief.start()
    burned = _burn(0.4)
    deadline = time.monotonic() + 20
    while len(sampler.samples) < 13 and time.monotonic() < deadline:
        time.sleep(0.02)
    done.set()
    brief.join()
    return burned


def _linked(n: int) -> tuple[socket.socket, int, list[socket.socket]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    links = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
    return server, port, links + [server.accept()[0] for _ in range(n)]


def test_the_timeline_holds_the_cpu_burned_between_its_samples_and_the_connections():
    server, port, links = _linked(2)
    cgroup = count(7)
    own, parent = psutil.Process(), psutil.Process(os.getppid())
    calls = count()
    # the tree as the server's workers come: the parent joins at the first re-listing (tick 10)
    sampler = Sampler(
        lambda: [own] if next(calls) == 0 else [own, parent],
        port,
        cgroup_cpu=lambda: float(next(cgroup)),
    )
    try:
        before, wall = os.times(), time.time()
        sampler.start()
        assert sampler._thread.daemon and sampler._thread.name == "wsgibench-sampler"
        burned = _burn_beside_a_brief_thread(sampler)
        time.sleep(max(0.0, 2.3 - (time.time() - wall)))  # past tick 20
        samples = sampler.stop()
        after, wall_end = os.times(), time.time()
        rss_now = _vm_rss(os.getpid())
    finally:
        server.close()
        for s in links:
            s.close()
    used = (after.user + after.system) - (before.user + before.system)  # this process's
    parent_cpu = sum(parent.cpu_times()[:2])
    assert burned - 0.02 <= sampler.tree_cpu_s <= used + parent_cpu + 0.02
    shares = sum(
        b.cpu_pct * (b.t_s - a.t_s) / 100 for a, b in zip(samples, samples[1:], strict=False)
    )
    assert samples[0].cpu_pct == 0.0 and math.isclose(shares, sampler.tree_cpu_s, rel_tol=1e-6)
    assert 0 <= samples[0].t_s < samples[-1].t_s <= wall_end - wall + 0.01
    ticks = samples[1:-1]  # the loop's samples, tick 1, 2, ...
    assert len(ticks) >= 20
    for tick, sample in enumerate(ticks, start=1):
        assert (sample.conns is not None) == (tick % sampler_mod.CONNS_EVERY == 0), tick
        assert sample.processes == (1 if tick < sampler_mod.REFRESH_EVERY else 2), tick
    assert (samples[0].processes, samples[-1].processes) == (1, 2)
    assert samples[0].conns == samples[-1].conns == 2  # the server side of the two links
    assert samples[-1].load1 == pytest.approx(os.getloadavg()[0], abs=1.0)
    assert all((s.conns is None) == (s.load1 is None) for s in samples)
    assert abs(samples[0].rss_bytes - rss_now) <= 4 * 2**20  # this process alone, at the start
    assert [r.cpu_s for r in sampler.cgroup] == [7.0 + i for i in range(len(samples))]
    assert all(wall <= r.unix_s <= wall_end for r in sampler.cgroup)
    assert [r.mono_s for r in sampler.cgroup] == sorted(r.mono_s for r in sampler.cgroup)
    assert sampler.cgroup_cpu_s == len(samples) - 1
    assert 0 < sampler.own_cpu_s < used - burned + 0.02  # the sampler's thread, not the burn
    threads = sampler.threads.summary()  # read at start, at each re-listing and at the end
    assert threads is not None and threads.window_s == pytest.approx(samples[-1].t_s, abs=0.1)
    assert threads.names.get("brief-worker") == 1
    assert Sampler(lambda: [], port).cgroup_cpu_s is None


class _Proc:
    """A process as the sampler reads it: CPU seconds so far and RSS, or gone."""

    def __init__(self, pid: int, cpu_s: float, rss: int, gone: bool = False) -> None:
        self.pid, self.cpu_s, self.rss, self.gone = pid, cpu_s, rss, gone

    def oneshot(self):
        return contextlib.nullcontext()

    def cpu_times(self):
        if self.gone:
            raise psutil.NoSuchProcess(self.pid)
        return SimpleNamespace(user=self.cpu_s * 0.75, system=self.cpu_s * 0.25)

    def memory_info(self):
        return SimpleNamespace(rss=self.rss)


def test_a_sample_adds_up_the_tree_s_cpu_and_memory(monkeypatch):
    clock = iter([101.0, 102.0, 102.0])
    monkeypatch.setattr(sampler_mod.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(sampler_mod.os, "getloadavg", lambda: (1.5, 2.5, 3.5))
    monkeypatch.setattr(sampler_mod, "established_on_port", lambda port: port + 1)
    gone, a, b = _Proc(1, 0.0, 0, gone=True), _Proc(2, 5.0, 1000), _Proc(3, 7.0, 2000)
    sampler = Sampler(lambda: [gone, a, b], 6)
    sampler._t0 = 100.0
    sampler._refresh()
    sampler.sample_once()
    a.cpu_s, b.cpu_s = 5.5, 6.0  # b's CPU went back (its pid reused): none counted for it
    sampler.sample_once(with_conns=False)
    sampler.sample_once()  # at the same instant: no share of no time
    assert sampler.samples == [
        Sample(1.0, 0.0, 3000, 2, 7, 1.5),
        Sample(2.0, pytest.approx(50.0), 3000, 2, None, None),
        Sample(2.0, 0.0, 3000, 2, 7, 1.5),
    ]
    assert sampler.tree_cpu_s == pytest.approx(0.5)
