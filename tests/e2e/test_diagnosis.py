"""Each diagnosis against a real server configured to trigger it, and none on a well-set server."""

from __future__ import annotations

import pytest

from wsgibench.results.store import Store
from wsgibench.run.study import StudyRunner
from wsgibench.study.model import parse_study

from .helpers import measured_or_engine_bound, require, server_flags


def _diagnose(tmp_path, server: str, load: dict, **study) -> tuple[set[str], object]:
    require(server)
    spec = {
        "name": "diag",
        "servers": [server],
        "repeats": 1,
        "error_threshold": 1.0,
        "load": [{"name": "l", "warmup_s": 0.0, **load}],
        **study,
    }
    store = Store(tmp_path / "r.sqlite")
    study_id = StudyRunner(parse_study(spec, "diag"), store).run()
    (cell,) = store.cells(study_id)
    assert cell.status in ("measured", "contended", "invalid"), cell.reason
    return {d["code"] for d in cell.diagnoses}, cell


CLOSED = {"model": "closed", "levels": [8], "duration_s": 1.5}


def test_well_configured_server_gets_no_flag(tmp_path):
    codes, _ = _diagnose(tmp_path, "gunicorn-gthread", CLOSED)
    # 'contended' says other work shared the machine's CPUs, nothing of the server's settings
    # (tests/e2e/test_interference.py checks it); a shared CI machine may raise it any time
    assert codes - {"contended"} == set()


def test_uwsgi_http_without_keep_alive(tmp_path):
    codes, cell = _diagnose(tmp_path, "uwsgi-http", CLOSED)
    assert "no-keep-alive" in codes
    assert not cell.capabilities["keep_alive"]


def test_backlog_of_5_under_a_burst(tmp_path):
    # wsgiref answers one request at a time and closes every connection: 300 clients
    # reconnecting all the time overflow a listen queue of 5.
    codes, _ = _diagnose(
        tmp_path, "wsgiref", {"model": "closed", "levels": [300], "duration_s": 2.0}, backlog=5
    )
    assert "listen-overflow" in codes


def test_missing_tcp_nodelay(tmp_path):
    codes, _ = _diagnose(
        tmp_path,
        "gevent-pywsgi",
        {"model": "closed", "levels": [2], "duration_s": 1.5},
        tcp_nodelay=False,
    )
    assert "nagle" in codes


def test_access_log_left_on(tmp_path):
    codes, _ = _diagnose(tmp_path, "gunicorn-gthread", CLOSED, access_log=True)
    assert "logging" in codes


def test_sleeping_app_with_one_worker(tmp_path):
    codes, _ = _diagnose(
        tmp_path,
        "gunicorn-sync",
        {"model": "count", "requests": 40, "levels": [10], "timeout_s": 30.0},
        app="sleep",
        app_env={"WSGIBENCH_SLEEP_S": "0.05"},
    )
    assert "waiting" in codes


@pytest.mark.parametrize("server", ["nginx-baseline"])
def test_baseline_has_no_flag(tmp_path, server):
    _, cell = _diagnose(tmp_path, server, CLOSED)
    assert measured_or_engine_bound(cell), (cell.status, cell.reason)
    assert server_flags(cell.diagnoses) == set()


def test_hypercorns_keep_alive_limit_is_recognised_with_its_n(tmp_path):
    # Hypercorn's default closes a connection after 1,000 requests (Connection: close): two
    # connections for 3 s run several thousand requests each, several closes per connection.
    load = {"model": "closed", "levels": [2], "duration_s": 3}
    codes, cell = _diagnose(tmp_path, "hypercorn-ka-limit", load)
    assert "closes-after-n" in codes, cell.diagnoses
    (said,) = [d["message"] for d in cell.diagnoses if d["code"] == "closes-after-n"]
    n = int(said.split("after about ")[1].split(" requests")[0].replace(",", ""))
    assert 800 <= n <= 1200, said
    assert "announced with Connection: close" in said
    # the same server with the limit raised is not said to have one
    codes, _ = _diagnose(tmp_path / "raised", "hypercorn", load)
    assert "closes-after-n" not in codes
