"""What one server really uses, on real processes: fault-busy-threads (4 threads named "busy" that
hash forever, the GIL released) uses as many cores as it is allowed, up to 4; pinned to one CPU or
under a 1-core cgroup quota it uses one at most. Then a study through the installed script runs it
pinned to one CPU, shared (as many cores as it may use, up to 4) and under a half-core quota: the
quota is verified and recorded, the cores used and requests per CPU-second are stored and shown,
and each placement is said."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from wsgibench.machine.sampler import Sampler
from wsgibench.machine.threads import ThreadUse
from wsgibench.run.serve import ServeOptions, start
from wsgibench.servers import get

from .helpers import cli, expect_measured
from .quiet import quiet_cpus

BUSY = "fault-busy-threads"


def _cores(
    cpus: list[int], quota: float | None = None, window_s: float = 2.0
) -> tuple[ThreadUse, str, int]:
    """The server's threads' use over `window_s`, the quota as verified, and how many processes
    its tree had (what the verification must have checked)."""
    server, workdir = start(get(BUSY), ServeOptions(cpus=cpus, cpu_quota=quota))
    try:
        tree = len(server.tree_pids())
        time.sleep(0.3)  # the busy threads are up
        sampler = Sampler(server.processes, server.port)
        sampler.start()
        time.sleep(window_s)
        sampler.stop()
        use = sampler.threads.summary()
        assert use is not None
        return use, server.cpu_quota, tree
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def test_cores_used_follow_the_cpus_allowed_and_the_quota():
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.fail(f"this test needs 2 CPUs, the machine gives {cpus}")
    with quiet_cpus() as quiet:  # the cores it used are its own only on CPUs nothing else takes
        shared, _, _ = _cores(cpus)
        pinned, _, _ = _cores(cpus[:1])
        quota, verified, tree = _cores(cpus, quota=1.0)
    assert shared.names.get("busy") == 4, shared.names
    busy = shared.groups_cpu_s["main process: runtime busy"]
    assert busy >= 0.9 * sum(shared.groups_cpu_s.values()), shared.groups_cpu_s
    # Read back from the group and checked for every process of the server's tree: never for 0.
    assert verified.startswith("cgroup v") and verified.endswith(
        f"quota 1 cores, read back and verified for {tree} process(es)"
    ), (verified, tree)
    assert tree >= 1
    want = min(4, len(cpus))
    with quiet.figures():
        assert want * 0.8 <= shared.cores_used <= want * 1.05, shared
        assert 0.8 <= pinned.cores_used <= 1.05, pinned
        assert 0.7 <= quota.cores_used <= 1.05, quota


STUDY = """
name = "placement-e2e"
servers = ["fault-busy-threads"]
repeats = 2
random_order = false
server_cpu_count = 1  # pinned: one CPU on any machine (half of them by default on 4 or more)

[[load]]
name = "pinned"
model = "closed"
levels = [2]
duration_s = 1.5
warmup_s = 0.3

[[load]]
name = "shared"
model = "closed"
levels = [2]
duration_s = 1.5
warmup_s = 0.3
placement = "shared"

[[load]]
name = "half-core"
model = "closed"
levels = [2]
duration_s = 1.5
warmup_s = 0.3
placement = "quota"
cpu_quota = 0.5
"""


def test_a_study_runs_pinned_shared_and_under_a_quota(tmp_path: Path):
    (tmp_path / "p.toml").write_text(STUDY)
    with quiet_cpus() as quiet:
        run = subprocess.run(
            cli("run", "p.toml", "--results", "p.sqlite", "--no-report"),
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
        )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    db = sqlite3.connect(tmp_path / "p.sqlite")
    db.row_factory = sqlite3.Row
    cells = {r["load"]: r for r in db.execute("SELECT * FROM cells")}
    for load, cell in cells.items():
        expect_measured(cell, load)
    iso = {load: json.loads(c["isolation_json"]) for load, c in cells.items()}
    assert "placement" not in iso["pinned"]["layout"]
    assert iso["shared"]["layout"]["placement"] == "shared"
    assert iso["half-core"]["layout"]["cpu_quota"] == 0.5
    verified = re.search(
        r"quota 0\.5 cores, read back and verified for (\d+) process", iso["half-core"]["cpu_quota"]
    )
    assert verified and int(verified[1]) >= 1, iso["half-core"]
    assert iso["half-core"]["cpu_throttling"]["throttled_periods"] > 0, iso["half-core"]
    cores = {}
    for load, c in cells.items():
        reps = db.execute("SELECT extra_json FROM repeats WHERE cell_id=?", (c["id"],)).fetchall()
        cores[load] = [json.loads(r["extra_json"])["threads"]["cores_used"] for r in reps]
    # shared: as many cores as it may use, up to its 4 busy threads (plus the thread that serves)
    want = min(4, len(iso["shared"]["layout"]["server_cpus"]))
    with quiet.figures():
        assert all(0.4 <= v <= 0.55 for v in cores["half-core"]), cores
        assert all(0.8 <= v <= 1.05 for v in cores["pinned"]), cores
        assert all(want * 0.8 <= v <= want + 0.6 for v in cores["shared"]), (want, cores)
    shown = subprocess.run(
        cli("show", "p.sqlite", "--wide"), capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert shown.returncode == 0, shown.stderr
    assert "req/CPU-s" in shown.stdout and "a CPU quota of 0.5 core(s)" in shown.stdout, (
        shown.stdout
    )
