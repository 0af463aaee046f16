"""Track exactly the processes a test started: each test puts a unique tag in the environment that
every child inherits (servers, their workers, the engine), and the process table is scanned for it.
Other people's processes on the machine never match."""

from __future__ import annotations

import os
import time
import uuid

import psutil

TAG_VAR = "WSGIBENCH_TEST_TAG"


def new_tag() -> str:
    return uuid.uuid4().hex


def tagged(tag: str, name: str | None = None) -> list[psutil.Process]:
    """Live (non-zombie) processes carrying the tag (of that name, when given), except this test
    process."""
    me = os.getpid()
    found = []
    for p in psutil.process_iter(["pid", "name"]):
        if p.pid == me or (name is not None and p.info["name"] != name):
            continue
        try:
            if p.environ().get(TAG_VAR) == tag and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (psutil.Error, OSError):
            continue
    return found


def describe(procs: list[psutil.Process]) -> list[str]:
    out = []
    for p in procs:
        try:
            out.append(f"{p.pid}: {' '.join(p.cmdline())[:150]}")
        except psutil.Error:
            out.append(f"{p.pid}: (gone)")
    return out


def none_left(tag: str, within_s: float = 3.0) -> list[str]:
    """Wait up to within_s for every tagged process to be gone; returns what is still there."""
    deadline = time.monotonic() + within_s
    while True:
        left = tagged(tag)
        if not left or time.monotonic() > deadline:
            return describe(left)
        time.sleep(0.1)


def alive(procs: list[psutil.Process]) -> list[str]:
    """Of processes seen earlier, those still running (pid reuse is excluded by psutil)."""
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(f"{p.pid}: {' '.join(p.cmdline())[:150]}")
        except psutil.Error:
            continue
    return out
