"""Worker deaths with a live master, timed-out requests, limits changed by hand and a CPU that
does not exist, through the installed script against the fault catalogue's servers, each checked
against what the fault itself did (its own count, written at SIGTERM)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from wsgibench.results.store import Store

from .helpers import cli

pytestmark = pytest.mark.e2e

HOW = {
    "fault-worker-exit": "exit status 1",
    "fault-worker-signal": "killed by SIGSEGV",
    "fault-worker-oom": "OOM kill under the memory limit",
    "fault-worker-stuck": "killed by the server's own worker timeout",
}


def _study(path: Path, servers: list[str], **extra: object) -> Path:
    lines = [
        'name = "faults"',
        f"servers = {json.dumps(servers)}",
        *(
            f"{k} = {json.dumps(v)}"
            for k, v in {"repeats": 1, "starts": 1, "memory_limit_mb": 128, **extra}.items()
            if k != "load"
        ),
        "[[load]]",
        'name = "closed"',
        'model = "closed"',
        "levels = [8]",
        "duration_s = 2",
        "warmup_s = 0.5",
        *(f"{k} = {json.dumps(v)}" for k, v in dict(extra.get("load") or {}).items()),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(study: Path, store: Path, counts: Path, timeout: float = 240) -> None:
    counts.mkdir(exist_ok=True)
    env = {**os.environ, "WSGIBENCH_REPLY_COUNTS": str(counts)}
    done = subprocess.run(
        cli("run", str(study), "--results", str(store), "--no-report"),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]


def test_worker_deaths_are_counted_as_the_server_counted_them(tmp_path):
    # Each fault's master counts the workers that died under it (not those its stop ends); the
    # cell's watch over the server's processes, from its start to its stop, counts the same.
    servers = list(HOW)
    counts = tmp_path / "counts"
    _run(_study(tmp_path / "s.toml", servers), tmp_path / "r.sqlite", counts)
    own = {}
    for f in counts.glob("deaths-*.json"):
        doc = json.loads(f.read_text())
        own[f.name] = doc
    store = Store(tmp_path / "r.sqlite", create=False, read_only=True)
    cells = {c.server: c for c in store.cells(store.study()["id"])}
    assert set(cells) == set(servers)
    total_own = sum(d["deaths"] for d in own.values())
    total_seen = sum((c.isolation or {})["worker_deaths"]["count"] for c in cells.values())
    assert total_seen == total_own > 0, (own, {s: c.isolation for s, c in cells.items()})
    for server, cell in cells.items():
        life = cell.isolation["worker_deaths"]
        assert life["count"] > 0, (server, life)
        assert set(life["how"]) == {HOW[server]}, (server, life)
        # never a clean measurement, never read as a keep-alive policy
        assert cell.status != "measured", (server, cell.status)
        codes = {d["code"] for d in cell.diagnoses}
        assert "closes-after-n" not in codes and "unannounced-close" not in codes, codes
        reps = store.stored_repeats(cell.id)
        died = [r.more.get("worker_deaths") or {} for r in reps]
        if server != "fault-worker-stuck":  # the others die every 300 requests of a worker
            assert sum(d.get("count", 0) for d in died) > 0, server
            assert any((d.get("lost") or {}).get("requests") for d in died), server


def test_timed_out_requests_put_the_p99_at_the_timeout_or_above(tmp_path):
    # Every 30th request is never answered (3.3 %), timeout 0.5 s: the p99 of the requests sent
    # is at least the timeout and said to be a bound; the replies' own p99 stays fast.
    study = _study(
        tmp_path / "s.toml", ["fault-timeout-some"], error_threshold=0.2, load={"timeout_s": 0.5}
    )
    _run(study, tmp_path / "r.sqlite", tmp_path / "counts")
    store = Store(tmp_path / "r.sqlite", create=False, read_only=True)
    (cell,) = store.cells(store.study()["id"])
    (rep,) = store.stored_repeats(cell.id)
    timeouts = rep.engine.totals.errors["timeout"]
    assert timeouts >= 0.01 * rep.requests, rep.engine.totals.errors
    assert rep.latency_p99_us >= 500_000, rep.latency_p99_us
    look = rep.more["latency"]
    assert "p99" in look["bounds"] and look["covers_failures"]
    assert look["replies"]["p99_us"] < 500_000
    shown = subprocess.run(
        cli("show", str(tmp_path / "r.sqlite")), capture_output=True, text=True, timeout=60
    ).stdout
    assert "≥500" in shown, shown


def _memory_groups() -> set[Path]:
    v1 = set(Path("/sys/fs/cgroup/memory").glob("wsgibench-*"))
    v2 = {p for p in Path("/sys/fs/cgroup").rglob("owner-*") if (p / "memory.max").exists()}
    return v1 | v2


def test_a_memory_limit_changed_by_hand_during_the_run_is_caught(tmp_path):
    before = _memory_groups()
    study = _study(tmp_path / "s.toml", ["fault-counted"], repeats=3)
    changed: list[str] = []

    def change_it() -> None:  # once the cell's group exists, double its limit
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not changed:
            for group in _memory_groups() - before:
                name = "memory.limit_in_bytes" if "memory/" in str(group) else "memory.max"
                try:
                    (group / name).write_text(str(256 * 2**20))
                    changed.append(str(group))
                except OSError:
                    continue
            time.sleep(0.2)

    hand = threading.Thread(target=change_it)
    hand.start()
    _run(study, tmp_path / "r.sqlite", tmp_path / "counts")
    hand.join()
    assert changed, "no memory group of the run was found to change"
    store = Store(tmp_path / "r.sqlite", create=False, read_only=True)
    (cell,) = store.cells(store.study()["id"])
    assert cell.status == "invalid", (cell.status, cell.reason)
    assert "memory limit no longer holds: asked for" in cell.reason, cell.reason


def test_an_engine_thread_pinned_to_a_cpu_that_does_not_exist_fails_before_load(tmp_path):
    plan = {
        "protocol_version": 1,
        "target": {"host": "127.0.0.1", "port": 9},
        "model": {"kind": "count", "requests": 5, "concurrency": 1},
        "requests": [{"name": "pong", "method": "GET", "path": "/ping"}],
        "cpus": [0, 1000],
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    engine = Path(cli()[0]).parent / "wsgibench-engine"
    done = subprocess.run(
        [str(engine), "run", str(tmp_path / "plan.json")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0
    assert "engine pinning" in done.stderr and "1000" in done.stderr, done.stderr
    assert not done.stdout.strip()  # no result: nothing was measured
