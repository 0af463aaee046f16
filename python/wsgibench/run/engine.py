"""The engine driver: find the `wsgibench-engine` binary, check its protocol, run a plan, and parse
its result once into an EngineResult. `Engine` is the small interface the runner uses (tests give it
a fake that returns chosen results)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from wsgibench.errors import EngineError
from wsgibench.machine import cpustat
from wsgibench.machine.process import raise_nofile
from wsgibench.results.engine_plan import PROTOCOL_VERSION, EnginePlan
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.result_fields import MalformedResult

BINARY = "wsgibench-engine"


def _candidates() -> list[Path]:
    found = []
    if os.environ.get("WSGIBENCH_ENGINE"):
        found.append(Path(os.environ["WSGIBENCH_ENGINE"]))
    found.append(Path(sysconfig.get_path("scripts")) / BINARY)
    found.append(Path(sys.executable).parent / BINARY)
    on_path = shutil.which(BINARY)
    if on_path:
        found.append(Path(on_path))
    repo = Path(__file__).resolve().parents[2] / "engine" / "target" / "release" / BINARY
    found.append(repo)
    return found


@cache
def find_engine() -> Path:
    chosen = os.environ.get("WSGIBENCH_ENGINE")
    if chosen:  # an explicit choice is never silently replaced by another binary
        path = Path(chosen)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise EngineError(
            f"WSGIBENCH_ENGINE={chosen} is not an executable file; unset it to use "
            f"the {BINARY} installed with wsgibench"
        )
    tried = _candidates()
    for path in tried:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise EngineError(
        f"{BINARY} not found (tried {', '.join(map(str, tried))}); "
        "reinstall wsgibench with `pip install .` (it builds the engine) or set WSGIBENCH_ENGINE"
    )


@cache
def engine_version() -> dict[str, Any]:
    path = find_engine()
    try:
        out = subprocess.run([str(path), "version"], capture_output=True, text=True, timeout=10)
        info = json.loads(out.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        raise EngineError(f"{path} does not answer `version` ({exc})") from None
    if info.get("protocol_version") != PROTOCOL_VERSION:
        raise EngineError(
            f"{path} speaks engine protocol {info.get('protocol_version')}, this wsgibench speaks "
            f"{PROTOCOL_VERSION}: reinstall wsgibench so both come from one build"
        )
    return dict(info)


def engine_child() -> None:
    raise_nofile()
    # The engine dies with wsgibench, even when wsgibench is SIGKILLed (no orphaned load).
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def last_line(text: str) -> str:
    """The last line an engine wrote on stderr: its one-line reason."""
    return (text.strip().splitlines() or ["no message"])[-1]


def check_plans(plans: list[EnginePlan]) -> list[tuple[int, str]]:
    """The engine's own verdict on plans, without running any: (index, why) per refused plan."""
    engine_version()
    path = find_engine()
    try:
        out = subprocess.run(
            [str(path), "check", "-"],
            input=json.dumps([plan.to_dict() for plan in plans]),
            capture_output=True,
            text=True,
            timeout=60,
        )
        report = json.loads(out.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        raise EngineError(f"{path} could not check the study's plans ({exc})") from None
    return [(int(e["index"]), str(e["error"])) for e in report.get("errors", [])]


def run_plan(plan: EnginePlan) -> EngineResult:
    engine_version()
    path, bound = find_engine(), plan.bound_s
    proc = subprocess.Popen(
        [str(path), "run", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=engine_child,
    )
    watch = cpustat.RunQueueWatch(proc.pid)
    watch.start()
    try:
        stdout, stderr = proc.communicate(plan.to_json(), timeout=bound)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise EngineError(f"engine did not finish within {bound:.0f} s") from None
    finally:
        watch.stop()
    if proc.returncode != 0:
        raise EngineError(f"engine failed (exit {proc.returncode}): {last_line(stderr)}")
    try:
        result = EngineResult.from_dict(json.loads(stdout))
    except ValueError as exc:  # MalformedResult is a ValueError too
        if isinstance(exc, MalformedResult):
            raise EngineError(str(exc)) from None
        raise EngineError("engine printed something that is not JSON") from None
    return replace(result, runqueue_wait_s=watch.waited_s)


class Engine(Protocol):
    """What the runner needs of an engine: run one plan, return its parsed result."""

    def run(self, plan: EnginePlan) -> EngineResult: ...


class EngineProcess:
    """The real engine: one `wsgibench-engine run` process per plan."""

    def run(self, plan: EnginePlan) -> EngineResult:
        return run_plan(plan)
