"""Scratch folders under the system's temporary folder, each marked with the process that made it,
and the sweep of those whose process is gone (a wsgibench or a load host killed before it could
remove them). A folder is only judged by a process in the same PID namespace (another container
sharing /tmp sees other processes), and a folder without a mark is never touched."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

PREFIX = "wsgibench-"
MARK = ".wsgibench-owner"
UNKNOWN = "unknown"  # no PID namespace to read: nothing is judged
_swept = False


def make(kind: str) -> Path:
    """A new folder `wsgibench-<kind>-…` under the temporary folder, marked as this process's."""
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-"))
    (folder / MARK).write_text(_owner(os.getpid()))
    return folder


@contextmanager
def folder(kind: str) -> Iterator[Path]:
    """`make`, removed when the block ends."""
    made = make(kind)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the marked scratch folders whose process is gone; returns what was removed."""
    root = root or Path(tempfile.gettempdir())
    gone = []
    try:
        entries = [p for p in root.iterdir() if p.name.startswith(PREFIX) and p.is_dir()]
    except OSError:
        return []
    for entry in entries:
        try:
            mark = (entry / MARK).read_text()
        except OSError:
            continue  # not ours to judge: unmarked, or not readable
        if _orphaned(mark):
            shutil.rmtree(entry, ignore_errors=True)
            gone.append(entry)
    return gone


def sweep_once() -> None:
    """`sweep`, the first time this process asks (each server start does)."""
    global _swept
    if not _swept:
        _swept = True
        sweep()


def _owner(pid: int) -> str:
    """Who made a folder: the PID namespace, the process id and its start time (a later process
    that reuses the id has another)."""
    return f"{_namespace()} {pid} {psutil.Process(pid).create_time():.2f}\n"


def _orphaned(mark: str) -> bool:
    parts, here = mark.split(), _namespace()
    if len(parts) != 3 or parts[0] != here or here == UNKNOWN:
        return False  # another namespace's (or a mark this version cannot read): left alone
    try:
        pid, started = int(parts[1]), float(parts[2])
    except ValueError:
        return False
    try:
        return bool(abs(psutil.Process(pid).create_time() - started) > 0.05)
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False


def _namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return UNKNOWN
