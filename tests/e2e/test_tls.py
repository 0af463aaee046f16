"""The tls study at small size, run as users run it (the installed `wsgibench` script), on
servers that offer h2 by ALPN (Hypercorn; Daphne, whose certificate goes in a Twisted endpoint
string) and one that offers HTTP/1.1 only (uvicorn): each is started with a certificate of the
test CA, which the engine verifies; keep-alive TLS holds one
handshake per connection, a new connection per request resumes the session, h2 over TLS is
measured on the first and said unavailable on the second with what ALPN chose; uvicorn behind
nginx (`uvicorn+nginx`) gets h2 and session resumption from the nginx that terminates its TLS."""

from __future__ import annotations

import json
import subprocess

from wsgibench.results.store import Store

from .helpers import cli, expect_measured, require

CONNECTIONS = 4
SERVERS = ("hypercorn", "daphne", "uvicorn", "uvicorn+nginx")


def test_the_tls_study_measures_each_server_with_and_without_tls(tmp_path):
    for server in SERVERS:
        require(server)
    results = tmp_path / "r.sqlite"
    proc = subprocess.run(
        cli(
            "run", "tls", "--servers", ",".join(SERVERS), "--no-ceiling",
            "--levels", str(CONNECTIONS), "--repeats", "1", "--duration", "1",
            "--results", str(results), "--no-report",
        ),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    store = Store(results, create=False)
    cells = {(c.server, c.load): c for c in store.cells(store.study()["id"])}
    loads = ("http", "https", "https-new-conn", "h2-10")
    assert set(cells) == {(s, ld) for s in SERVERS for ld in loads}

    def engine(server: str, load: str) -> tuple[dict, dict]:
        cell = cells[(server, load)]
        expect_measured(cell, server, load)
        (rep,) = store.repeats(cell.id)
        assert rep["ok"] > 100 and rep["errors"] == 0, (server, load, rep["errors"])
        return json.loads(rep["engine_json"]), rep

    for server in SERVERS:
        plain, _ = engine(server, "http")
        assert "tls" not in plain and "tls" not in plain["plan"]
        kept, _ = engine(server, "https")
        tls = kept["tls"]
        # The certificate chained to the CA the plan carried; one handshake per connection.
        assert tls["verified"] and "BEGIN CERTIFICATE" in kept["plan"]["tls"]["ca_pem"]
        assert tls["handshakes"] == kept["totals"]["connections_opened"] >= CONNECTIONS
        assert tls["failures"] == {}
        fresh, rep = engine(server, "https-new-conn")
        tls = fresh["tls"]
        # A connection per request: a handshake each, all but each thread's first resumed;
        # none on Daphne, whose Twisted TLS options issue no session tickets by default.
        assert tls["handshakes"] == fresh["totals"]["connections_opened"] >= rep["ok"]
        if server == "daphne":
            assert tls["resumed"] == 0, tls
        else:
            assert tls["resumed"] >= tls["handshakes"] - CONNECTIONS, tls
    _behind_nginx(cells)
    # Daphne: Twisted's h2 on its ssl: endpoint; uvicorn+nginx: nginx's h2 in front of HTTP/1.1.
    for server in ("hypercorn", "daphne", "uvicorn+nginx"):
        h2, _ = engine(server, "h2-10")
        assert h2["tls"]["alpn"] == {"h2": h2["tls"]["handshakes"]}
        assert h2["http2"]["settings_received"] == h2["http2"]["connections"] >= CONNECTIONS
        assert cells[(server, "h2-10")].capabilities["h2"] is True
    refused = cells[("uvicorn", "h2-10")]
    assert refused.status == "unavailable", refused.reason
    # uvicorn's TLS negotiates no ALPN protocol at all.
    assert "does not speak HTTP/2 over TLS here: ALPN chose no h2 (it chose nothing)" in (
        refused.reason
    )
    # Found by the behaviour checks and stored.
    assert refused.capabilities["h2"] is False, refused.capabilities
    assert store.repeats(refused.id) == []


def _behind_nginx(cells: dict) -> None:
    """nginx answers for uvicorn behind it (its Server header; uvicorn is started without one),
    with uvicorn's own loop read back through it."""
    for server in ("uvicorn", "uvicorn+nginx"):
        cell = cells[(server, "https")]
        assert ("server," in cell.capabilities["wire_head"]) is server.endswith("+nginx"), cell
        assert cell.isolation["runtime"]["loop"] == "uvloop", cell.isolation
