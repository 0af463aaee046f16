"""A server's venv is its lock, exactly: installed twice from scratch it holds the same packages,
and they are the locked versions (uv installs with --require-hashes)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from wsgibench.machine import locks
from wsgibench.servers import get

from .helpers import cli


def _install(home: Path, *extra: str) -> dict[str, str]:
    env = {**os.environ, "WSGIBENCH_HOME": str(home)}
    proc = subprocess.run(
        cli("install", "waitress", *extra),
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (marker,) = (home / "envs").glob("waitress-*/wsgibench-env.json")
    return json.loads(marker.read_text())


def test_installed_twice_from_its_lock_gives_the_same_packages(tmp_path: Path):
    lock = get("waitress").env.lock
    assert lock is not None and lock.exists()
    first = _install(tmp_path / "home")
    again = _install(tmp_path / "home", "--force")
    assert first["packages"] == again["packages"]
    assert first["lock_sha256"] == again["lock_sha256"] == locks.digest(lock)
    for name, version in locks.pins(lock).items():
        assert first["packages"][name] == version


def test_a_pinned_release_is_locked_on_a_machine_that_never_locked_one(tmp_path: Path):
    # A new home has no locks/ folder yet: `lock` makes it, as a newcomer's first command would.
    env = {**os.environ, "WSGIBENCH_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        cli("lock", "gunicorn-gthread@19.9.0"), capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lock = tmp_path / "home" / "locks" / "gunicorn@19.9.0.lock"
    assert locks.pins(lock)["gunicorn"] == "19.9.0", lock.read_text()
