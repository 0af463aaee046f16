"""A database server process started by wsgibench: its data dir, user, pinning, readiness, stop."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import psutil

from wsgibench.databases.base import READY_TIMEOUT_S, STOP_GRACE_S, Database
from wsgibench.errors import EnvironmentProblem
from wsgibench.machine.cgroups import KillGroup


class ServerDatabase(Database):
    """A database server process started by wsgibench: data dir, user, pinning, stop."""

    user = ""  # the account it runs as when wsgibench is root

    def __init__(self, root: Path, cpus: list[int] | None = None):
        super().__init__(root, cpus)
        self.datadir: Path | None = None
        self.port: int | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.group = KillGroup(None)
        self._log: BinaryIO | None = None

    # -- helpers -----------------------------------------------------------------------------
    def _account(self) -> tuple[int, int] | None:
        if os.geteuid() != 0:
            return None
        try:
            entry = pwd.getpwnam(self.user)
        except KeyError:
            raise EnvironmentProblem(
                f"{self.kind}: no `{self.user}` user to run it as: "
                f"apt-get install --reinstall {self.package}"
            ) from None
        return entry.pw_uid, entry.pw_gid

    def _make_datadir(self) -> Path:
        """A fresh dir next to the results store, if the database's user can reach it; else in /tmp."""
        account = self._account()
        name = f"wsgibench-db-{self.kind}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.root.mkdir(parents=True, exist_ok=True)
        base = (
            self.root
            if account is None or _reachable(self.root, *account)
            else Path(tempfile.gettempdir())
        )
        path = base / name
        path.mkdir(mode=0o700)
        if account:
            os.chown(path, *account)
        return path

    def _preexec(self, account: tuple[int, int] | None) -> Callable[[], None]:
        cpus, group = self.cpus, self.group

        def run() -> None:
            if cpus:
                os.sched_setaffinity(0, cpus)
            group.join_self()
            if account:
                uid, gid = account
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)

        return run

    def _run_as(self, argv: list[str], what: str, **kw: Any) -> str:
        account = self._account()
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            cwd=self.datadir,
            preexec_fn=self._preexec(account),
            **kw,
        )
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"]
            raise EnvironmentProblem(f"{self.kind}: {what} failed: {tail[0][:300]}")
        return str(proc.stdout)

    def _spawn(self, argv: list[str]) -> None:
        self.group = KillGroup.create()
        assert self.datadir is not None
        self._log = (self.datadir.parent / f"{self.datadir.name}.log").open("wb")
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=self.datadir,
            start_new_session=True,
            preexec_fn=self._preexec(self._account()),
        )

    def _wait_ready(self, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise EnvironmentProblem(
                    f"{self.kind} exited with code {self.proc.returncode}: {self._log_tail()}"
                )
            if ready():
                return
            time.sleep(0.2)
        raise EnvironmentProblem(
            f"{self.kind} did not accept connections within "
            f"{READY_TIMEOUT_S:.0f} s: {self._log_tail()}"
        )

    def _log_tail(self) -> str:
        if self.datadir is None:
            return ""
        try:
            lines = (
                (self.datadir.parent / f"{self.datadir.name}.log")
                .read_text(errors="replace")
                .strip()
                .splitlines()
            )
        except OSError:
            return "(no log)"
        return " | ".join(line.strip()[:200] for line in lines[-3:])

    def start(self) -> dict[str, str]:
        self.check()
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> dict[str, str]:
        raise NotImplementedError

    def settings(self) -> dict[str, str]:
        """The app's connection settings (WSGIBENCH_DB_*) for the server on self.port."""
        return {
            "WSGIBENCH_DB_KIND": self.kind,
            "WSGIBENCH_DB_HOST": "127.0.0.1",
            "WSGIBENCH_DB_PORT": str(self.port),
            "WSGIBENCH_DB_USER": "bench",
            "WSGIBENCH_DB_PASSWORD": "",
            "WSGIBENCH_DB_NAME": "bench",
        }

    def _term_signal(self) -> int:
        return signal.SIGTERM

    def stop(self) -> None:
        if self.proc is not None:
            _signal_group(self.proc.pid, self._term_signal())
            try:
                self.proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(self.proc.pid, signal.SIGKILL)
            self.group.kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self.group.remove()
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.datadir is not None:
            shutil.rmtree(self.datadir, ignore_errors=True)
            (self.datadir.parent / f"{self.datadir.name}.log").unlink(missing_ok=True)
            self.datadir = None

    def pids(self) -> list[int]:
        if self.proc is None:
            return []
        try:
            root = psutil.Process(self.proc.pid)
            found = {root.pid, *(c.pid for c in root.children(recursive=True))}
        except psutil.NoSuchProcess:
            found = set()
        return sorted(found | set(self.group.pids()))


def quiet(fn: Callable[[], object]) -> bool:
    try:
        fn()
        return True
    except EnvironmentProblem:
        return False


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _reachable(path: Path, uid: int, gid: int) -> bool:
    """Whether uid:gid may traverse every directory down to path (pytest's tmp dirs are 0700)."""
    groups = {gid, *(g.gr_gid for g in grp.getgrall() if pwd.getpwuid(uid).pw_name in g.gr_mem)}
    for p in [path, *path.parents]:
        st = p.stat()
        bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid in groups else 0o001
        if not st.st_mode & bit:
            return False
    return True
