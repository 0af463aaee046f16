"""Scratch folders: marked with the process that made it, removed when the block ends, and swept
when their process is gone (or its id was reused); folders of another PID namespace, unmarked
folders and folders without the prefix are left alone."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import psutil
import pytest

from wsgibench.machine import scratch


@pytest.fixture
def tmp_root(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _marked(root: Path, name: str, mark: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / scratch.MARK).write_text(mark)
    (folder / "apps").mkdir()  # something inside, as a server's folder has
    return folder


def _dead_process() -> tuple[int, float]:
    """A process id no process has now (the top of the range), and a start time."""
    top = int(Path("/proc/sys/kernel/pid_max").read_text())
    pid = next(p for p in range(top - 1, 1, -1) if not psutil.pid_exists(p))
    return pid, psutil.Process().create_time()


def test_a_folder_is_marked_as_this_processs_and_removed_after_its_block(tmp_root):
    with scratch.folder("bjoern") as made:
        assert made.parent == tmp_root and made.name.startswith("wsgibench-bjoern-")
        ns, pid, started = (made / scratch.MARK).read_text().split()
        assert ns == os.readlink("/proc/self/ns/pid") and int(pid) == os.getpid()
        assert float(started) == pytest.approx(psutil.Process().create_time(), abs=0.01)
        assert scratch.sweep() == []  # its process lives: kept
        assert made.exists()
    assert not made.exists()


def test_only_the_folders_of_gone_processes_in_this_namespace_are_swept(tmp_root):
    ns = os.readlink("/proc/self/ns/pid")
    pid, started = _dead_process()
    gone = _marked(tmp_root, "wsgibench-waitress-a1", f"{ns} {pid} {started:.2f}\n")
    me = psutil.Process()
    reused = _marked(tmp_root, "wsgibench-share-b2", f"{ns} {me.pid} {me.create_time() - 500:.2f}")
    mine = scratch.make("uvicorn")
    other_ns = _marked(tmp_root, "wsgibench-nginx-c3", f"pid:[1] {pid} {started:.2f}")
    unreadable = _marked(tmp_root, "wsgibench-gunicorn-d4", "a mark of another version")
    unmarked = tmp_root / "wsgibench-bjoern-e5"
    unmarked.mkdir()
    not_ours = _marked(tmp_root, "someone-else", f"{ns} {pid} {started:.2f}")
    assert sorted(scratch.sweep()) == sorted([gone, reused])
    assert not gone.exists() and not reused.exists()
    assert all(p.exists() for p in (mine, other_ns, unreadable, unmarked, not_ours))
