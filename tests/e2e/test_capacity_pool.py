"""A capacity load on a pool of keep-alive connections (`pool`, every request on the schedule),
through the installed `wsgibench` script, on a server whose capacity is known: fault-fixed-service
serves one request at a time, 5 ms each, so 200 requests/s, whichever connection it came on.

The search finds 200 requests/s within 10 % (on CPUs nothing else takes: tests/e2e/quiet.py), every
step kept to the pool's 8 connections, as the engine counted them and as the server's side of
the socket table had them, and a met step opened no connection beyond them. About 45 s on 2 cores.
"""

from __future__ import annotations

import json

import pytest

from wsgibench.results.capacity import COST_NOTE, StepStatus
from wsgibench.results.capacity_read import read_capacities
from wsgibench.results.store import Store

from .helpers import require, run_capacity_study
from .quiet import QuietCpus, quiet_cpus, skip_if_search_contended

SERVER = "fault-fixed-service"
KNOWN = 200.0  # requests/s: 1 / the recipe's 5 ms service
POOL = 8
STUDY = f"""
name = "capacity-pool-e2e"
servers = ["{SERVER}"]
repeats = 1
starts = 1  # one server start a cell: the search's (or history's) own logic is tested here
random_order = false

[[load]]
name = "p99"
model = "capacity"
slo_p99_ms = 50
pool = {POOL}
duration_s = 1.5
warmup_s = 0.3
start_rate = 160
step_repeats = 2
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Store, int, QuietCpus]:
    require(SERVER)
    folder = tmp_path_factory.mktemp("capacity-pool")
    (folder / "cap.toml").write_text(STUDY)
    with quiet_cpus() as quiet:
        store = run_capacity_study(folder / "cap.toml", folder)
    return store, store.study()["id"], quiet


def test_the_known_capacity_is_found_on_a_pool(run):
    store, study_id, quiet = run
    (found,) = read_capacities(store, study_id)
    result = found.result
    # with a pool the rate is requests/s: one request an arrival
    assert found.calls == 1
    skip_if_search_contended(result.invalid)
    with quiet.figures():
        assert result.invalid is None and result.stopped == "within 5%", result.stopped
        capacity = found.requests(result.capacity)
        assert capacity is not None and abs(capacity - KNOWN) <= 0.1 * KNOWN, result.steps


def test_every_step_ran_on_the_pool_and_no_more_connections(run):
    store, study_id, _ = run
    (found,) = read_capacities(store, study_id)
    status = {s.rate: s.status for s in found.result.steps}
    cells = [c for c in store.cells(study_id) if c.load == "p99" and COST_NOTE not in c.notes]
    # (a step the machine limited and the search ran again: the rerun's cell took its place)
    kept = [s for s in found.result.steps if s.cell_id is not None]
    assert [c.id for c in cells] == [s.cell_id for s in kept]
    assert [c.level for c in cells] == [s.rate for s in kept]
    for cell in cells:
        for row in store.repeats(cell.id):
            engine = json.loads(row["engine_json"])
            totals = engine["totals"]
            assert totals["peak_open_connections"] <= POOL, (cell.level, totals)
            # the server's side: its established connections, read once a second while it ran
            held = [s["conns"] for s in store.samples(row["id"]) if s["conns"] is not None]
            assert held and max(held) <= POOL, (cell.level, held)
            if status[cell.level] == StepStatus.MET:
                # the server kept every connection: the pool opened its 8 and no other
                assert totals["connections_opened"] == POOL, (cell.level, totals)
                assert max(held) == POOL, (cell.level, held)  # and the server held all 8
                assert totals["queue_timeouts"] == 0
