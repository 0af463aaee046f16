"""Start a server's processes pinned and grouped, wait until it is ready, stop it without orphans."""

from __future__ import annotations

import functools
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from wsgibench.errors import StartupError
from wsgibench.machine.cgroups import KillGroup, MemoryCgroup
from wsgibench.machine.cpuquota import CpuQuota
from wsgibench.machine.serverenv import server_environ

STOP_GRACE_S = 5.0


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS picks; the server binds it moments later (a clash is retried by the caller)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def _tcp_open(host: str, port: int) -> Probed:
    """Whether a process of the server (an upstream behind its front) accepts connections yet."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return Probed(True)
    except OSError:
        return Probed(False)


@dataclass(frozen=True)
class Command:
    """One process to start; every command of a server is started in its own process group."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    role: str = "server"  # "server", or "front" for nginx/Apache in front of it
    # Files (path relative to workdir -> text) written before the process starts.
    files: dict[str, str] = field(default_factory=dict)
    # The port this process listens on; the next command starts once it answers TCP.
    listens_on: int | None = None
    # Folders put first on PYTHONPATH (before whatever the environment already puts there).
    pythonpath: tuple[str, ...] = ()

    def environ(self, base: dict[str, str]) -> dict[str, str]:
        env = {**base, **self.env}
        if self.pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(
                [*self.pythonpath, *filter(None, [env.get("PYTHONPATH")])]
            )
        return env


@dataclass
class Started:
    command: Command
    proc: subprocess.Popen[bytes]
    log: Path


@dataclass
class RunningServer:
    host: str
    port: int  # where it answers
    workdir: Path  # its scratch directory: configs and logs
    cgroup: MemoryCgroup
    group: KillGroup = field(default_factory=lambda: KillGroup(None))
    memory: str = ""  # the memory limit as verified once the server answered (see MemoryCgroup)
    started: list[Started] = field(default_factory=list)
    quota: CpuQuota = field(default_factory=lambda: CpuQuota(None, "no quota requested", None))
    cpu_quota: str = ""  # the CPU quota as verified once the server answered (see CpuQuota)

    @property
    def main_pid(self) -> int:
        return self.started[0].proc.pid

    def processes(self) -> list[psutil.Process]:
        """Every live process of this server: each started process and all its descendants.
        The kill group lists them in one file read; walking /proc is the fallback."""
        if self.group.path is not None:
            return _existing(self.group.pids())
        found: dict[int, psutil.Process] = {}
        for s in self.started:
            try:
                root = psutil.Process(s.proc.pid)
                for p in [root, *root.children(recursive=True)]:
                    found[p.pid] = p
            except psutil.NoSuchProcess:
                continue
        return list(found.values())

    def tree_pids(self) -> list[int]:
        """Every live process descending from the started ones, walked through /proc apart from
        any cgroup: what the limits' verification checks the groups against."""
        found: set[int] = set()
        for s in self.started:
            try:
                root = psutil.Process(s.proc.pid)
                found.update(p.pid for p in [root, *root.children(recursive=True)])
            except psutil.NoSuchProcess:
                continue
        return sorted(found)

    def cpu_usage_s(self) -> float | None:
        """CPU seconds of every process of this start so far, exited ones included (its kill
        group's cgroup accounting; None without one)."""
        return self.group.cpu_usage_s()

    def limits_changed(self) -> str | None:
        """Why the memory limit or the CPU quota verified at start no longer holds: changed in its
        group, or a process of the server outside it (None: both hold, or none was set)."""
        for limit, name in ((self.cgroup, "memory limit"), (self.quota, "CPU quota")):
            if limit.path is None:
                continue
            why = limit.changed()
            if why is None:
                verified = limit.verify(self.tree_pids())
                why = verified.removeprefix("not applied: ") if "not applied" in verified else None
            if why is not None:
                return f"{name} no longer holds: {why}"
        return None

    def log_marks(self) -> list[int]:
        """Each started process's log size now, for `log_since`."""
        return [s.log.stat().st_size if s.log.exists() else 0 for s in self.started]

    def log_since(self, marks: list[int]) -> str:
        """What the server's processes logged after `marks` (from `log_marks`)."""
        texts = []
        for s, mark in zip(self.started, marks, strict=False):
            try:
                with s.log.open("rb") as f:
                    f.seek(mark)
                    texts.append(f.read(1 << 20).decode(errors="replace"))
            except OSError:
                continue
        return "\n".join(texts)

    def dead(self) -> str | None:
        """Why the server is gone, or None while every started process runs."""
        for s in self.started:
            code = s.proc.poll()
            if code is not None:
                return f"{s.command.role} process exited with code {code}: {log_tail(s.log)}"
        return None

    def logged_bytes(self) -> int:
        return sum(s.log.stat().st_size for s in self.started if s.log.exists())

    def stop(self, grace_s: float = STOP_GRACE_S) -> bool:
        """SIGTERM every group (front first), then SIGKILL whatever is left after the bound.

        Returns True when a started process ignored SIGTERM and had to be killed."""
        survivors = self.processes()
        for s in reversed(self.started):
            _signal_group(s.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for s in self.started:
            try:
                s.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        forced = any(s.proc.poll() is None for s in self.started)
        for s in self.started:
            _signal_group(s.proc.pid, signal.SIGKILL)
        self.group.kill()  # anything that left its process group (double fork, setsid)
        for p in survivors:
            try:
                p.kill()
            except psutil.Error:
                pass
        for s in self.started:
            try:
                s.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        psutil.wait_procs(survivors, timeout=2)
        self.group.remove()
        self.cgroup.remove()
        self.quota.remove()
        return forced


def _existing(pids: list[int]) -> list[psutil.Process]:
    procs = []
    for pid in pids:
        try:
            procs.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            pass
    return procs


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def log_tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(line.strip()[:200] for line in text[-lines:]) or "(empty log)"


def raise_nofile(target: int = 1_048_576) -> None:
    """Lift the open-file limit (hard too, when root): 20,000 sessions need 20,000 descriptors."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        nr_open = int(Path("/proc/sys/fs/nr_open").read_text())
    except (OSError, ValueError):
        nr_open = target
    want = min(target, nr_open)
    # Raising the hard limit needs CAP_SYS_RESOURCE, which a sandboxed root may lack: then the
    # soft limit still goes up to the hard one.
    for limits in ((want, want), (min(want, hard), hard)):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, limits)
            return
        except (ValueError, OSError):
            continue


def _preexec(
    cpus: list[int] | None, cgroup: MemoryCgroup, group: KillGroup, quota: CpuQuota
) -> Callable[[], None]:
    def run() -> None:
        raise_nofile()
        _die_with_parent()
        if cpus:
            os.sched_setaffinity(0, cpus)
        cgroup.join_self()
        quota.join_self()
        group.join_self()

    return run


def _libc_prctl() -> Callable[..., int] | None:
    try:
        import ctypes

        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()  # looked up here: nothing is imported between fork and exec


def _die_with_parent() -> None:
    """PR_SET_PDEATHSIG: a SIGKILLed wsgibench takes its servers' main processes along; what they
    left (workers, daemons) is swept by the next run's sweep_orphans (kill group)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)


@dataclass(frozen=True)
class Probed:
    """One look at a starting server: ready, or what it answered instead ("" when nothing yet),
    and whether that answer is one a starting server does not change (a 3xx or 4xx status)."""

    ready: bool
    said: str = ""
    final: bool = False


# A server that gives the same final wrong answer this long is up and serving something else: its
# start fails then, naming the answer, rather than after the whole start timeout.
SETTLED_S = 3.0


@dataclass(frozen=True)
class Readiness:
    """How to tell the server is up: a probe of its port, named for the error when it never is."""

    probe: Callable[[], Probed]
    what: str
    timeout_s: float


def launch(
    commands: list[Command],
    host: str,
    port: int,
    workdir: Path,
    cpus: list[int] | None,
    memory_limit_bytes: int | None,
    ready: Readiness,
    env: dict[str, str] | None = None,
    cpu_quota: float | None = None,
) -> RunningServer:
    """Start the commands in order, each in the server's kill group, memory limit and CPU quota,
    and return once `ready` says the server answers; `memory` and `cpu_quota` then say what limits
    its processes are under."""
    group = KillGroup.create()
    cgroup = MemoryCgroup.create(memory_limit_bytes, group)
    server = RunningServer(host, port, workdir, cgroup, group)
    server.quota = CpuQuota.create(cpu_quota, group)
    base = {**server_environ(), **(env or {})}  # the study's app_env may set what is dropped
    try:
        for i, cmd in enumerate(commands):
            for rel, text in cmd.files.items():
                (workdir / rel).write_text(text)
            log = workdir / f"{i}-{cmd.role}.log"
            with log.open("wb") as out:
                proc = subprocess.Popen(
                    cmd.argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=cmd.cwd or workdir,
                    env=cmd.environ(base),
                    start_new_session=True,
                    preexec_fn=_preexec(cpus, cgroup, server.group, server.quota),
                )
            server.started.append(Started(cmd, proc, log))
            if i < len(commands) - 1 and cmd.listens_on:
                listens_on = cmd.listens_on
                _wait(
                    server,
                    functools.partial(_tcp_open, host, listens_on),
                    ready.timeout_s,
                    f"{cmd.role} on port {listens_on}",
                )
        _wait(server, ready.probe, ready.timeout_s, ready.what)
        pids = server.tree_pids()  # found apart from the groups they are checked against
        server.memory = cgroup.verify(pids)
        server.cpu_quota = server.quota.verify(pids)
        return server
    except BaseException:
        server.stop(grace_s=1.0)
        raise


def _wait(server: RunningServer, look: Callable[[], Probed], timeout_s: float, what: str) -> None:
    """Until the server is ready; a StartupError when it died, kept giving the same final wrong
    answer for SETTLED_S, or was not ready within timeout_s (naming its last answer)."""
    deadline = time.monotonic() + timeout_s
    last, since = Probed(False), 0.0
    while (now := time.monotonic()) < deadline:
        gone = server.dead()
        if gone:
            raise StartupError(f"server did not start: {gone}")
        seen = look()
        if seen.ready:
            return
        if seen.said:
            if not (seen.final and seen == last):
                since = now
            last = seen
            if seen.final and now - since >= SETTLED_S:
                raise StartupError(f"no {what}: it answered {seen.said} for {SETTLED_S:g} s")
        time.sleep(0.05)
    said = f" (its last answer: {last.said})" if last.said else ""
    raise StartupError(
        f"no {what} within {timeout_s:.0f} s{said}: {log_tail(server.started[-1].log)}"
    )
