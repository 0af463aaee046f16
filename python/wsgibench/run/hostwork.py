"""What runs on a load host, as Dask tasks: the preflight (versions, limits, CPUs, clock) and one
share of a cell's load: the engine started behind its gate, `ready` said through a Dask queue, the
start instant read from a Dask variable and handed to the engine in this host's own clock, and a
stop event watched until the engine is done. Nothing here retries or moves load elsewhere."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import socket
import subprocess
import time
from functools import cache
from pathlib import Path
from typing import Any

import wsgibench
from wsgibench.errors import EngineError
from wsgibench.machine import cpustat, scratch
from wsgibench.run.engine import engine_child, engine_version, find_engine, last_line

READY_TIMEOUT_S = 30.0  # the engine reads its plan and says ready well within this
POLL_S = 0.1


def names(cell_key: str) -> tuple[str, str, str]:
    """The Dask queue (ready), variable (start instant) and event (stop) of one cell's run."""
    return f"{cell_key}-ready", f"{cell_key}-start", f"{cell_key}-stop"


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def clock_now() -> int:
    """This host's wall clock (ns): the controller reads it to learn the host's offset."""
    return time.time_ns()


@cache
def fingerprint(path: Path) -> str:
    """A digest of a file, or of a package's Python files: equal versions, equal builds."""
    digest = hashlib.sha256()
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    for f in files:
        digest.update(str(f.relative_to(path)).encode() if path.is_dir() else b"")
        digest.update(f.read_bytes())
    return digest.hexdigest()[:16]


def net_namespace() -> int:
    """The network namespace this process is in (its inode)."""
    return os.stat("/proc/self/ns/net").st_ino


def preflight() -> dict[str, Any]:
    """What the controller checks and stores of a load host before the first cell."""
    try:
        ports = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        port_range = [int(p) for p in ports]
    except (OSError, ValueError):
        port_range = []
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        engine: dict[str, Any] = {**engine_version(), "build": fingerprint(find_engine())}
    except EngineError as exc:
        engine = {"error": str(exc)}
    return {
        "hostname": socket.gethostname(),
        "boot_id": boot_id(),
        "net_namespace": net_namespace(),
        "wsgibench": {
            "version": wsgibench.__version__,
            "build": fingerprint(Path(wsgibench.__file__).parent),
        },
        "engine": engine,
        "nofile": [soft, hard],
        "ephemeral_ports": port_range,
        "cpu_count": os.cpu_count(),
        "cpus": sorted(os.sched_getaffinity(0)),
    }


def _read_ready(err_path: Path, proc: subprocess.Popen[bytes]) -> None:
    """Wait for the engine's `ready` line; an engine that exits first failed to start."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        text = err_path.read_text(errors="replace")
        if text.startswith("ready "):
            return
        if proc.poll() is not None:
            raise EngineError(
                f"engine failed before its start (exit {proc.returncode}): {last_line(text)}"
            )
        time.sleep(0.002)
    proc.kill()
    raise EngineError(f"engine did not say ready within {READY_TIMEOUT_S:g} s")


def run_share(
    plan: dict[str, Any],
    cell_key: str,
    index: int,
    offset_ns: int,
    bound_s: float,
    schedule: bytes | None = None,
) -> dict[str, Any]:
    """Run this host's share of a cell (a Dask task); returns the engine's document as printed.
    A trace's schedule file comes as `schedule`, written here for the engine."""
    from distributed import Event, Queue, Variable

    ready_q, start_var, stop_event = names(cell_key)
    scratch.sweep_once()  # what a killed load host left behind
    with scratch.folder("share") as tmp:
        plan_path, out_path, err_path = (Path(tmp) / n for n in ("plan.json", "out", "err"))
        plan_path.write_text(json.dumps(_with_schedule(plan, schedule, Path(tmp))))
        with out_path.open("wb") as out, err_path.open("wb") as err:
            proc = subprocess.Popen(
                [str(find_engine()), "run", str(plan_path), "--gate"],
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                preexec_fn=engine_child,
            )
        assert proc.stdin is not None
        watch = cpustat.RunQueueWatch(proc.pid)
        try:
            _read_ready(err_path, proc)
            Queue(ready_q).put(index)
            start_ns = int(Variable(start_var).get(timeout=READY_TIMEOUT_S + bound_s))
            got_ns = time.time_ns()  # this host's clock, as the instant below is
            if start_ns <= 0:  # the controller called the cell off before its start
                raise EngineError("the cell was called off before the start")
            proc.stdin.write(f"start {start_ns + offset_ns}\n".encode())
            proc.stdin.flush()
            watch.start()
            stopped = _wait(proc, Event(stop_event), bound_s)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            watch.stop()
        if stopped:
            raise EngineError(stopped)
        if proc.returncode != 0:
            line = last_line(err_path.read_text(errors="replace"))
            raise EngineError(f"engine failed (exit {proc.returncode}): {line}")
        doc = json.loads(out_path.read_text())
    return {
        "index": index,
        "host": socket.gethostname(),
        "result": doc,
        "runqueue_wait_s": watch.waited_s,
        "started_at_ns": start_ns + offset_ns,
        # how far ahead of its instant the start reached this host (below 0: after it), and how
        # long after that instant its engine really began; both in this host's own clock
        "start_margin_s": (start_ns + offset_ns - got_ns) / 1e9,
        "began_late_s": float(doc["started_unix_s"]) - (start_ns + offset_ns) / 1e9,
    }


def _with_schedule(plan: dict[str, Any], schedule: bytes | None, folder: Path) -> dict[str, Any]:
    """The plan, its trace's schedule file written in `folder` and named there."""
    if schedule is None:
        return plan
    path = folder / "schedule.trace"
    path.write_bytes(schedule)
    return {**plan, "model": {**plan["model"], "schedule": str(path)}}


def _wait(proc: subprocess.Popen[bytes], stop: Any, bound_s: float) -> str | None:
    """Wait for the engine; why it was stopped before its end, or None."""
    deadline = time.monotonic() + bound_s
    while proc.poll() is None:
        why = None
        if stop.is_set():
            why = "stopped by the controller"
        elif time.monotonic() > deadline:
            why = f"engine did not finish within {bound_s:.0f} s"
        if why:
            assert proc.stdin is not None
            try:
                proc.stdin.write(b"stop\n")
                proc.stdin.flush()
            except OSError:
                pass
            proc.kill()
            return why
        try:
            proc.wait(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            continue
    return None
