"""Two releases of one server in one study, through the installed script: waitress at 3.0.0 and
at the catalog's release, each from its own lock, stored with its version and its lock's hash; a
release that does not exist is recorded unavailable with the lock's failure; and `history` over
three such stores, by version, puts both releases in one timeline per cell key."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from wsgibench.results.store import Store
from wsgibench.servers import get
from wsgibench.servers.versions import locks_dir

from .helpers import cli, expect_measured, require

OLD = "3.0.0"
STUDY = f"""
name = "versions"
servers = ["waitress@{OLD}", "waitress", "waitress@0.0.1"]
repeats = 2

[[load]]
name = "c"
model = "closed"
levels = [4]
duration_s = 0.5
warmup_s = 0.2
"""


def test_two_releases_locked_stored_and_read_as_one_history(tmp_path: Path):
    require("waitress")
    newest = get("waitress").env
    assert newest is not None
    (tmp_path / "v.toml").write_text(STUDY)
    for i in range(3):
        proc = subprocess.run(
            cli("run", "v.toml", "--results", f"run-{i}.sqlite", "--no-report"),
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    store = Store(tmp_path / "run-0.sqlite", read_only=True)
    cells = {c.server: c for c in store.cells(store.study()["id"])}
    old, new, missing = cells[f"waitress@{OLD}"], cells["waitress"], cells["waitress@0.0.1"]
    expect_measured(old)
    expect_measured(new)
    assert old.server_info and old.server_info["version"] == OLD
    assert new.server_info and new.server_info["version"] != OLD
    lock = locks_dir() / f"{newest.name}@{OLD}.lock"
    assert lock.exists() and f"waitress=={OLD}" in lock.read_text()
    assert old.server_info["lock_sha256"] == hashlib.sha256(lock.read_bytes()).hexdigest()
    assert missing.status == "unavailable"
    assert "did not build here" in (missing.reason or "") and "0.0.1" in (missing.reason or "")
    shown = subprocess.run(
        cli("history", str(tmp_path), "--order", "version", "--server", "waitress"),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stdout[-2000:] + shown.stderr[-2000:]
    out = shown.stdout
    assert "3 run(s)" in out and out.count("waitress c @4") == 1  # one timeline, both releases
    lines = [line for line in out.splitlines() if line.startswith("│")]
    versions = [line.split("│")[3].strip() for line in lines]
    # in release order, the one that did not build first (it names no measured point)
    assert versions == ["0.0.1"] * 3 + [OLD] * 3 + [new.server_info["version"]] * 3, versions
