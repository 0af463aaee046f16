"""The workers a Dask scheduler has now, read fresh for each question.

`Client.scheduler_info()` fetches them, then returns the client's cached copy; the client's own
periodic update (every 2 s) fetches that copy without the workers, and when it lands between the
fetch and the read the cluster looks empty: a live load host would be taken for lost."""

from __future__ import annotations

from typing import Any


def present_workers(client: Any) -> set[str]:
    """The addresses of the workers the scheduler knows now (a synchronous client)."""
    info = client.sync(client.scheduler.identity, n_workers=-1)
    return set(info["workers"])
