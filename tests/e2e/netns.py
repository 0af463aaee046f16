"""Test hosts in network namespaces, made and removed by the test itself: a bridge on a private
subnet, a server namespace that also holds the Dask scheduler and the controller, and client
namespaces with one Dask worker each (`ip netns`, veth pairs; needs root and iproute2)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCHEDULER_PORT = 8786


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


class NetnsLab:
    """`hosts` client namespaces and one server namespace on a bridge 10.213.K.0/24."""

    def __init__(self, hosts: int, tmp: Path):
        if os.geteuid() != 0 or shutil.which("ip") is None:
            pytest.fail("network-namespace test hosts need root and iproute2 (`ip`)")
        self.k = random.Random(os.getpid() + time.time_ns()).randint(1, 250)
        self.tag = f"wb{self.k}"
        self.bridge = f"{self.tag}br"
        self.server_ns = f"{self.tag}-srv"
        self.clients = [f"{self.tag}-c{i + 1}" for i in range(hosts)]
        self.tmp = tmp
        self.procs: list[subprocess.Popen[bytes]] = []
        self.workers: dict[str, subprocess.Popen[bytes]] = {}

    def address(self, ns: str) -> str:
        last = 2 if ns == self.server_ns else 10 + self.clients.index(ns) + 1
        return f"10.213.{self.k}.{last}"

    @property
    def scheduler(self) -> str:
        return f"tcp://{self.address(self.server_ns)}:{SCHEDULER_PORT}"

    def __enter__(self) -> NetnsLab:
        try:
            _ip("link", "add", self.bridge, "type", "bridge")
            _ip("addr", "add", f"10.213.{self.k}.1/24", "dev", self.bridge)
            _ip("link", "set", self.bridge, "up")
            for n, ns in enumerate([self.server_ns, *self.clients]):
                outer = f"{self.tag}v{n}"
                _ip("netns", "add", ns)
                _ip("link", "add", outer, "type", "veth", "peer", "name", "eth0", "netns", ns)
                _ip("link", "set", outer, "master", self.bridge)
                _ip("link", "set", outer, "up")
                _ip("-n", ns, "addr", "add", f"{self.address(ns)}/24", "dev", "eth0")
                _ip("-n", ns, "link", "set", "eth0", "up")
                _ip("-n", ns, "link", "set", "lo", "up")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for ns in [self.server_ns, *self.clients]:
            pids = _ip("netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _ip("netns", "del", ns, check=False)
        _ip("link", "del", self.bridge, check=False)

    def spawn(self, ns: str, argv: list[str], log: str) -> subprocess.Popen[bytes]:
        out = (self.tmp / log).open("wb")
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *argv],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.procs.append(p)
        return p

    def start_dask(self) -> None:
        """The scheduler in the server's namespace, a worker in each client namespace."""
        self.spawn(
            self.server_ns,
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
             self.address(self.server_ns), "--port", str(SCHEDULER_PORT),
             "--dashboard-address", ":0", "--no-dashboard"],
            "scheduler.log",
        )  # fmt: skip
        for ns in self.clients:
            self.start_worker(ns)
        self.wait_for_workers()

    def start_worker(self, ns: str, cpus: str | None = None) -> None:
        """A Dask worker in that namespace (pinned with taskset when `cpus` is given)."""
        pin = ["taskset", "-c", cpus] if cpus else []
        self.workers[ns] = self.spawn(
            ns,
            [*pin, sys.executable, "-m", "distributed.cli.dask_worker", self.scheduler,
             "--no-nanny", "--nthreads", "1", "--host", self.address(ns), "--name", ns,
             "--no-dashboard"],
            f"worker-{ns}-{len(self.procs)}.log",
        )  # fmt: skip

    def wait_for_workers(self, count: int | None = None) -> None:
        """Until the scheduler has `count` workers (default: one per client namespace)."""
        wanted = len(self.clients) if count is None else count
        deadline = time.monotonic() + 60
        while True:
            try:
                out = self.run_in(
                    self.server_ns,
                    [sys.executable, "-c",
                     "import sys; from distributed import Client; "
                     f"c = Client({self.scheduler!r}, timeout=5); "
                     "print(len(c.scheduler_info()['workers']))"],
                )  # fmt: skip
                if out.returncode == 0 and int(out.stdout.split()[-1]) == wanted:
                    return
            except (ValueError, IndexError):
                pass
            if time.monotonic() > deadline:
                logs = "".join(p.read_text()[-600:] for p in self.tmp.glob("*.log"))
                pytest.fail(f"Dask workers did not join within 60 s: {logs}")
            time.sleep(0.5)

    def run_in(
        self, ns: str, argv: list[str], timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["ip", "netns", "exec", ns, *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
