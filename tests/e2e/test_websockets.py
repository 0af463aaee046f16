"""The websockets study at small size, run as users run it (the installed `wsgibench` script),
on two servers that speak WebSocket through different libraries: every upgrade validated, every
echo counted once, every broadcast message delivered to every subscriber once; and a server
whose app does not speak WebSocket is unavailable with the statuses it gave, not a wall of
errors."""

from __future__ import annotations

import json
import subprocess

from wsgibench.report.data import load_report_data
from wsgibench.report.findings import findings
from wsgibench.report.frameworks import sections
from wsgibench.results.store import Store

from .helpers import cli, expect_measured, require

# Each with the WebSocket library it runs on, read back from the server.
SERVERS = {"uvicorn": "websockets (sans-I/O)", "hypercorn": "wsproto"}
CONNECTIONS = 16
FRAME = 2 + 64  # a server's frame of the study's 64-byte message: unmasked, a 2-byte head


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli(*args), capture_output=True, text=True, timeout=600)


def test_the_websockets_study_echoes_on_two_servers(tmp_path):
    for server in SERVERS:
        require(server)
    results = tmp_path / "r.sqlite"
    proc = _run(
        "run", "websockets", "--servers", ",".join(SERVERS), "--no-ceiling",
        "--levels", str(CONNECTIONS), "--repeats", "1", "--duration", "1",
        "--results", str(results), "--no-report",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    store = Store(results, create=False)
    cells = store.cells(store.study()["id"])
    assert sorted(c.server for c in cells) == sorted([*SERVERS, *SERVERS])
    for cell in cells:
        expect_measured(cell, cell.server)
        assert cell.capabilities["websocket"] is True, cell.capabilities
        if cell.load == "broadcast":
            _check_broadcast(store, cell)
            continue
        assert f"WebSocket: {SERVERS[cell.server]}" in cell.notes, cell.notes
        (rep,) = store.repeats(cell.id)
        engine = json.loads(rep["engine_json"])
        ws, totals = engine["websocket"], engine["totals"]
        # the server sent back 64-byte messages: each echo a 2-byte frame head and 64 bytes,
        # beside each connection's upgrade reply (the plan's copy would say 64 whatever ran)
        frames = FRAME * ws["messages_received"]
        upgrades = totals["bytes_received"] - frames
        assert 0 < upgrades <= 1024 * ws["handshakes_ok"], (totals["bytes_received"], frames)
        assert ws["handshakes_ok"] == CONNECTIONS, ws
        assert ws["handshake_failures"] == {} and ws["duplicates"] == 0, ws
        assert rep["ok"] > 500 and rep["errors"] == 0, totals
        # Every echo came back once, matched to the message it answers.
        assert ws["messages_received"] == totals["responses"] == totals["ok"]
    _check_findings(store)


def _check_findings(store: Store) -> None:
    """The report's findings match the data: echoes ranked in echoes/s, the broadcast judged on
    delivery latency and loss (every server got the publisher's fixed rate), no ceiling and no
    framework where the study declares none."""
    data = load_report_data(store)
    lines = findings(data)
    assert sections(data) == [] and not any("ceiling" in line for line in lines), lines
    echo = next(line for line in lines if line.startswith(f"echo, connections {CONNECTIONS}:"))
    assert " leads with " in echo and "echoes/s" in echo and "req/s" not in echo, echo
    fan = next(line for line in lines if line.startswith("broadcast,"))
    assert "leads" not in fan and "req/s" not in fan, fan
    assert "the publisher's 20 messages/s to each subscriber" in fan, fan
    assert "delivery latency p99" in fan and "no delivery lost, corrupt or duplicated" in fan, fan


def _check_broadcast(store: Store, cell) -> None:
    """One publisher at 20 messages a second for 1 s through the app's hub: each message reached
    every subscriber once, in order, its latency measured from when it was due."""
    (rep,) = store.repeats(cell.id)
    engine = json.loads(rep["engine_json"])
    fan, totals = engine["websocket"]["broadcast"], engine["totals"]
    assert engine["plan"]["model"]["kind"] == "broadcast"
    assert engine["plan"]["requests"][0]["path"] == "/ws/broadcast"
    assert fan["publisher_open"] and fan["subscribers_open"] == CONNECTIONS, fan
    assert fan["published"] == 20, fan
    assert fan["due"] == fan["delivered"] == 20 * CONNECTIONS == totals["ok"], fan
    assert fan["lost"] == fan["duplicates"] == fan["corrupt"] == 0, fan
    assert engine["kinds"][0]["latency_us"]["count"] == 20 * CONNECTIONS
    assert any(n.startswith(f"broadcast: {CONNECTIONS} of {CONNECTIONS}") for n in cell.notes)


def test_an_app_that_does_not_speak_websocket_is_unavailable_with_its_answers(tmp_path):
    require("uvicorn")
    study = tmp_path / "no-ws.toml"
    study.write_text("""
name = "no-ws"
servers = ["uvicorn"]
app = "pong"
repeats = 1
[[load]]
name = "echo"
model = "closed"
protocol = "websocket"
levels = [4]
duration_s = 1.0
warmup_s = 0.2
""")
    results = tmp_path / "r.sqlite"
    proc = _run("run", str(study), "--results", str(results), "--no-report")
    # Nothing could be measured: the run says so in one line and keeps the cell's reason.
    assert proc.returncode != 0
    assert "does not speak WebSocket here" in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    store = Store(results, create=False)
    (cell,) = store.cells(store.study()["id"])
    assert cell.status == "unavailable"
    # The pong app answers a WebSocket scope with an HTTP reply: uvicorn refuses the upgrade,
    # as the behaviour checks find before any load and store with the cell.
    assert "the upgrade got 'HTTP/1.1 500" in cell.reason, cell.reason
    assert cell.capabilities["websocket"] is False, cell.capabilities
    assert store.repeats(cell.id) == []
