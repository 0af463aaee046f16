"""Load from three Dask workers in network namespaces against a real server in its own namespace:
the merged counts equal the server's own count of replies, host by host; the merged histogram is
the exact sum of the hosts'; the hosts started within 10 ms. A worker killed mid-cell makes the
cell invalid with the reason, leaves no engine behind, and `--resume` runs that cell again."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import psutil
from hdrh.histogram import HdrHistogram

from wsgibench.results.engine_result import EngineResult
from wsgibench.results.store import Store
from wsgibench.results.verdict import BOTTLENECK, SKEW

from .helpers import again_while_the_machine_spoils, cli, expect_measured
from .netns import NetnsLab
from .procs import describe, tagged
from .quiet import busy_said

STUDY = """
name = "load-hosts"
servers = ["fault-counted"]
repeats = 1
memory_limit_mb = 512
app_env = {{ WSGIBENCH_REPLY_COUNTS = "{counts}" }}
{extra}
{loads}
"""
CLOSED = """
[[load]]
name = "closed"
model = "closed"
levels = [6]
duration_s = {duration}
warmup_s = 0
"""
RATE = """
[[load]]
name = "rate"
model = "rate"
levels = [300]
duration_s = 2.0
warmup_s = 0
"""


def _study(tmp: Path, loads: str, extra: str = "") -> Path:
    counts = tmp / "counts"
    counts.mkdir(exist_ok=True)
    path = tmp / "study.toml"
    path.write_text(STUDY.format(counts=counts, loads=loads, extra=extra))
    return path


def _wsgibench(lab: NetnsLab, study: Path, store: Path, *extra: str) -> list[str]:
    return [*cli("run"), str(study), "--cluster", lab.scheduler,
            "--server-host", lab.address(lab.server_ns), "--results", str(store), "--no-report",
            "--no-install", *extra]  # fmt: skip


def _engines(tag: str) -> list[str]:
    """The engines this test started (through its Dask workers, which carry its tag), still
    running; another user's engine on the machine is none of them."""
    return describe(tagged(tag, "wsgibench-engine"))


def _result(store: Store, cell_id: int) -> EngineResult:
    (rep,) = store.repeats(cell_id)
    return EngineResult.from_dict(json.loads(rep["engine_json"]))


def _one_attempt(lab: NetnsLab, tmp: Path) -> list[str]:
    """Run the two-cell study into `tmp`, check what must hold whatever the machine did (the
    counts, the merge, the hosts), and return the reasons of cells whose hosts started apart."""
    store_path = tmp / "r.sqlite"
    study = _study(tmp, CLOSED.format(duration=2.0) + RATE)
    out = lab.run_in(lab.server_ns, _wsgibench(lab, study, store_path), timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    store = Store(store_path, read_only=True)
    (study_row,) = [store.study(None)]
    env = json.loads(study_row["environment_json"])
    hosts = env["load_hosts"]["hosts"]
    assert sorted(h["address"].split("//")[1].split(":")[0] for h in hosts) == sorted(
        lab.address(ns) for ns in lab.clients
    )
    assert all(h["same_machine"] and not h["same_network"] for h in hosts)
    assert all(h["ephemeral_ports"] and h["nofile"] and h["cpu_count"] for h in hosts)
    counts = sorted(
        (json.loads(p.read_text()) for p in (tmp / "counts").glob("replies-*.json")),
        key=lambda c: c["started"],
    )
    cells = sorted(store.cells(study_row["id"]), key=lambda c: c.id)
    assert [c.load for c in cells] == ["closed", "rate"] and len(counts) == 2
    apart = []
    for cell, count in zip(cells, counts, strict=True):
        # On a shared 2-CPU machine an engine may fall behind its schedule, or one host's engine
        # start late: those verdicts are honest, and the counts and the merge must hold all the same.
        reason = cell.reason or ""
        honest = cell.status == "invalid" and reason.startswith(BOTTLENECK)
        honest = honest or cell.status == "measured" or busy_said(cell.status, reason)
        if cell.status == "invalid" and reason.startswith(SKEW):
            apart.append(reason)
        else:
            assert honest, (cell.load, cell.reason)
        result = _result(store, cell.id)
        assert len(result.load_hosts) == 3
        # the server's own count, host by host and in all
        by_peer = count["by_peer"]
        for host in result.load_hosts:
            ip = host.address.split("//")[1].split(":")[0]
            assert host.result.totals.ok == by_peer.get(ip), (cell.load, ip, by_peer)
            assert host.start_margin_s is not None and host.began_late_s is not None
        clients = {lab.address(ns) for ns in lab.clients}
        assert result.totals.ok == sum(n for ip, n in by_peer.items() if ip in clients)
        assert result.totals.error_count == 0
        # the merged histogram is the exact sum of the hosts' histograms
        merged = HdrHistogram.decode(result.kinds[0].latency.hdr)
        expected = HdrHistogram.decode(result.load_hosts[0].result.kinds[0].latency.hdr)
        for host in result.load_hosts[1:]:
            expected.add(HdrHistogram.decode(host.result.kinds[0].latency.hdr))
        assert merged.get_total_count() == expected.get_total_count() == result.totals.ok
        for it in expected.get_recorded_iterator():
            assert merged.get_count_at_value(it.value_iterated_to) == (
                it.count_at_value_iterated_to
            )
        assert result.start_skew_s is not None
        assert (result.start_skew_s <= 0.010) == (not reason.startswith(SKEW)), reason
    # the rate cell: 300/s for 2 s over three hosts, every arrival sent once
    assert _result(store, cells[1].id).totals.ok == 600
    return apart


def test_three_load_hosts_act_as_one(tmp_path: Path, own_tag: str):
    with NetnsLab(3, tmp_path) as lab:
        lab.start_dask()
        # Three engines, a server, Dask and the controller share 2 CPUs here: one engine may
        # wake late (28 ms once in CI on 2026-11-28, when the hypervisor took 5-25 % of the
        # CPUs). The cell then says so, with the cause; the 10 ms start is run again to be
        # shown, at most three times in all.
        apart = again_while_the_machine_spoils(
            lambda here: _one_attempt(lab, here), lambda got: got, tmp_path, attempts=3
        )
        assert not apart, apart
    assert not _engines(own_tag)


def _wait_for_engine_in(ns: str, timeout: float = 60) -> None:
    """Until an engine runs in that namespace, and a little longer: the load is under way."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        for pid in pids.stdout.split():
            try:
                if psutil.Process(int(pid)).name() == "wsgibench-engine":
                    time.sleep(0.5)
                    return
            except psutil.Error:
                continue
        time.sleep(0.1)
    raise AssertionError(f"no engine started in {ns}")


def test_a_killed_load_host_invalidates_the_cell_and_resume_runs_it_again(
    tmp_path: Path, own_tag: str
):
    with NetnsLab(3, tmp_path) as lab:
        lab.start_dask()
        store_path = tmp_path / "r.sqlite"
        # A lost host and --resume are what this test is about; the 10 ms start bound is
        # test_three_load_hosts_act_as_one's. On a busy CI machine (2026-11-28) the resumed
        # cell's hosts once started 18.9 ms apart, and the cell was rightly invalid.
        study = _study(tmp_path, CLOSED.format(duration=6.0), "start_skew_bound_ms = 100")
        argv = ["ip", "netns", "exec", lab.server_ns, *_wsgibench(lab, study, store_path)]
        run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        victim = lab.clients[1]
        _wait_for_engine_in(victim)
        started = time.monotonic()
        lab.workers[victim].kill()
        out, _ = run.communicate(timeout=120)
        assert time.monotonic() - started < 30, "the cell did not end soon after the host died"
        assert run.returncode in (0, 1), out[-2000:]
        time.sleep(1)
        assert not _engines(own_tag), "an engine outlived its cell"
        store = Store(store_path, read_only=True)
        row = store.study(None)
        assert row["status"] == "incomplete"
        (cell,) = store.cells(row["id"])
        assert cell.status == "invalid", (cell.status, cell.reason)
        assert "left the cluster" in cell.reason and lab.address(victim) in cell.reason
        assert store.repeats(cell.id) == []
        store.db.close()
        # the host comes back; --resume runs the lost cell again, on every host
        lab.start_worker(victim)
        lab.wait_for_workers()
        again = lab.run_in(
            lab.server_ns, _wsgibench(lab, study, store_path, "--resume"), timeout=300
        )
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
        store = Store(store_path, read_only=True)
        row = store.study(None)
        assert row["status"] == "finished"
        (cell,) = store.cells(row["id"])
        expect_measured(cell)
        assert len(_result(store, cell.id).load_hosts) == 3
    assert not _engines(own_tag)
