"""A live load host is never taken for lost: the workers a real Dask scheduler has, read while the
client's own periodic update runs every 5 ms (it fetches the scheduler's identity without the
workers into the cache that `Client.scheduler_info()` returns; read through that cache, 47 of
1,500 reads here missed a worker). About 5 s."""

from __future__ import annotations

import dask
from distributed import Client, LocalCluster

from wsgibench.run.scheduler_view import present_workers


def test_every_read_sees_every_worker():
    with (
        dask.config.set({"distributed.client.scheduler-info-interval": "5ms"}),
        LocalCluster(n_workers=3, processes=False, dashboard_address=None) as cluster,
        Client(cluster.scheduler_address) as client,
    ):
        client.wait_for_workers(3)
        reads = [present_workers(client) for _ in range(1500)]
    assert all(len(r) == 3 for r in reads), sum(len(r) < 3 for r in reads)
