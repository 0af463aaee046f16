"""The http2 study at small size, run as users run it (the installed `wsgibench` script), on a
server that speaks HTTP/2 in clear text (Hypercorn) and one that does not (uvicorn): the h2c
loads are measured on the first with every stream validated and as many in flight as asked
(Little's law on what the engine measured), and said unavailable on the
second, with what it sent instead of SETTINGS (found by the behaviour checks, before any load,
and stored with the cell); HTTP/1.1 is measured on both."""

from __future__ import annotations

import json
import subprocess

from wsgibench.results.store import Store

from .helpers import cli, expect_measured, require
from .quiet import quiet_cpus

CONNECTIONS = 4
STREAMS = {"h2c-1": 1, "h2c-10": 10, "h2c-100": 100}


def test_the_http2_study_measures_h2c_where_it_is_spoken(tmp_path):
    for server in ("hypercorn", "uvicorn"):
        require(server)
    results = tmp_path / "r.sqlite"
    with quiet_cpus() as quiet:
        proc = subprocess.run(
            cli(
                "run", "http2", "--servers", "hypercorn,uvicorn", "--no-ceiling",
                "--levels", str(CONNECTIONS), "--repeats", "1", "--duration", "1",
                "--results", str(results), "--no-report",
            ),
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    # uvicorn's h2c cells are unavailable, a verdict on the server: the run itself succeeded
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    store = Store(results, create=False)
    cells = {(c.server, c.load): c for c in store.cells(store.study()["id"])}
    assert set(cells) == {(s, ld) for s in ("hypercorn", "uvicorn") for ld in ["http1.1", *STREAMS]}
    for server in ("hypercorn", "uvicorn"):
        expect_measured(cells[(server, "http1.1")])
    for load, streams in STREAMS.items():
        cell = cells[("hypercorn", load)]
        expect_measured(cell, load)
        (rep,) = store.repeats(cell.id)
        engine = json.loads(rep["engine_json"])
        h2, totals = engine["http2"], engine["totals"]
        # The streams the engine kept open at once, from what it measured: by Little's law the
        # requests in flight are the replies a second times their mean latency, about
        # connections x streams, less the streams the window's end cuts off (the plan's copy
        # would say so whatever ran; 1, 10 and 100 streams are told apart by ten times).
        in_flight = rep["rps_ok"] * engine["kinds"][0]["latency_us"]["mean"] / 1e6
        with quiet.figures():
            assert 0.6 * CONNECTIONS * streams <= in_flight <= 1.1 * CONNECTIONS * streams, (
                load,
                in_flight,
            )
        # Every connection got Hypercorn's SETTINGS; every stream was answered and validated.
        assert h2["settings_received"] == h2["connections"] >= CONNECTIONS, h2
        assert h2["rst_streams"] == {} and h2["protocol_errors"] == {}, h2
        assert rep["ok"] > 100 and rep["errors"] == 0, totals
        assert h2["streams"] == totals["requests_sent"]
        # The behaviour checks found h2c on one and stored it; the other is unavailable before
        # any load, with what it sent instead of SETTINGS.
        assert cell.capabilities["h2c"] is True, cell.capabilities
        refused = cells[("uvicorn", load)]
        assert refused.status == "unavailable", (load, refused.status)
        assert "does not speak HTTP/2 with prior knowledge (h2c) here" in refused.reason
        assert "no SETTINGS: it " in refused.reason, refused.reason
        assert refused.capabilities["h2c"] is False, refused.capabilities
        assert store.repeats(refused.id) == []
