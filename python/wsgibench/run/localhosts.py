"""`--load-hosts N`: a Dask scheduler inside this process and N Dask workers, each a process of its
own started with `python -m distributed.cli.dask_worker`. No multiprocessing start method is
involved, so nothing re-imports the program that runs wsgibench (the installed script, `python -m
wsgibench`, or a program embedding it, with or without a `__main__` guard); each worker dies with
this process (PR_SET_PDEATHSIG) and is stopped by `close()`."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

from wsgibench.errors import EnvironmentProblem
from wsgibench.run.scheduler_view import present_workers

START_TIMEOUT_S = 60.0


def _dies_with_parent() -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class LocalWorkers:
    """A scheduler in this process and `count` worker processes, one thread each."""

    def __init__(self, count: int):
        from distributed import LocalCluster

        self.cluster: Any = LocalCluster(
            n_workers=0,
            processes=False,  # the scheduler only, in a thread of this process
            protocol="tcp",  # in-process clusters default to inproc://, which workers cannot reach
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
        self.address: str = self.cluster.scheduler_address
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[Any] = []  # each worker's stderr, read only when it dies
        try:
            for index in range(count):
                self.procs.append(self._worker(index))
        except OSError as exc:
            self.close()
            raise EnvironmentProblem(f"cannot start a local Dask worker: {exc}") from None

    def _worker(self, index: int) -> subprocess.Popen[bytes]:
        command = [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            self.address,
            "--no-nanny",
            "--nthreads",
            "1",
            "--no-dashboard",
            "--name",
            f"load-host-{index + 1}",
            "--memory-limit",
            "0",
        ]
        log = tempfile.TemporaryFile()
        self.logs.append(log)
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            preexec_fn=_dies_with_parent,
        )

    def wait(self, client: Any) -> None:
        """Until every worker has joined; a worker that exits first ends the run with its reason."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while len(present_workers(client)) < len(self.procs):
            dead = next((i for i, p in enumerate(self.procs) if p.poll() is not None), None)
            if dead is not None or time.monotonic() > deadline:
                why = (
                    self._last_words(dead)
                    if dead is not None
                    else f"not joined in {START_TIMEOUT_S:.0f} s"
                )
                self.close()
                raise EnvironmentProblem(f"a local load host did not start: {why}")
            time.sleep(0.1)

    def _last_words(self, index: int) -> str:
        log = self.logs[index]
        log.seek(0)
        lines = [line for line in log.read().decode(errors="replace").splitlines() if line.strip()]
        return f"exit {self.procs[index].returncode}: {lines[-1] if lines else 'no message'}"

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs = []
        for log in self.logs:
            log.close()
        self.logs = []
        self.cluster.close()
