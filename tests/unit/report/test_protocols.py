"""HTTP/2 and TLS findings in their own terms: per server, h2c against HTTP/1.1 keep-alive on the
load of the same shape, and the cost of TLS against clear text in req/s and CPU per request; a
server without h2c is said not compared with its reason; differences tested on the server starts,
the false discovery rate kept over them."""

from __future__ import annotations

import re
from pathlib import Path

from unit.synthetic_loads import Spec, build
from wsgibench.report.data import load_report_data
from wsgibench.report.findings import findings
from wsgibench.report.protocols import pairs
from wsgibench.results.store import Store

ONE = {"model": "closed", "levels": [10], "duration_s": 5.0, "warmup_s": 1.0}
NO_H2C = "no SETTINGS from the server: it speaks no h2c"


def _data(path: Path):
    return load_report_data(Store(path, create=False, read_only=True))


def test_h2c_against_http11_per_server(tmp_path: Path):
    loads = [
        {"name": "http1.1", "http": "1.1", "keep_alive": True, **ONE},
        {"name": "h2c-10", "protocol": "h2c", "streams": 10, **ONE},
        {"name": "slow", "protocol": "h2c", "streams": 10, **ONE, "duration_s": 9.0},
    ]
    cells = {
        ("http1.1", "hypercorn", 10): Spec(15000),
        ("http1.1", "granian-asgi", 10): Spec(30000),
        ("http1.1", "uvicorn", 10): Spec(40000),
        ("h2c-10", "hypercorn", 10): Spec(12000),
        ("h2c-10", "granian-asgi", 10): Spec(30000),
        ("h2c-10", "uvicorn", 10): Spec(status="unavailable", reason=NO_H2C),
        ("slow", "hypercorn", 10): Spec(1000),
    }
    data = _data(build(tmp_path / "h.sqlite", loads, cells, name="http2"))
    assert [(p.load.name, p.base.name, p.what) for p in pairs(data)] == [
        ("h2c-10", "http1.1", "h2c")
    ]  # "slow" differs in more than its protocol: no pair
    said = next(line for line in findings(data) if line.startswith("h2c "))
    assert said.startswith(
        "h2c (h2c-10, 10 streams per connection) against HTTP/1.1 keep-alive (http1.1), "
        "connections 10: "
    )
    hypercorn = r"hypercorn 1[12],\d{3} req/s over h2c against 1[45],\d{3} over HTTP/1\.1, "
    assert re.search(hypercorn + r"2[01]% fewer \(adjusted p = ", said), said
    granian = r"granian-asgi 29,9\d\d req/s over h2c against 29,9\d\d over HTTP/1\.1, "
    assert re.search(granian + r"within noise \(adjusted p = ", said), said
    assert f"uvicorn not compared (h2c-10 unavailable: {NO_H2C})" in said
    assert said.endswith(
        "(Student's t on the logs of the server starts' medians, the FDR kept over these)."
    )


def test_the_cost_of_tls_per_server_in_req_s_and_cpu_per_request(tmp_path: Path):
    loads = [
        {"name": "http", "keep_alive": True, **ONE},
        {"name": "https", "keep_alive": True, "tls": True, **ONE},
        {"name": "https-new-conn", "keep_alive": False, "tls": True, **ONE},
    ]
    cells = {
        ("http", "uvicorn", 10): Spec(10000, cpu=95.0),
        ("https", "uvicorn", 10): Spec(8000, cpu=95.0),
        ("https-new-conn", "uvicorn", 10): Spec(1000, cpu=95.0),
    }
    data = _data(build(tmp_path / "t.sqlite", loads, cells, name="tls"))
    assert [(p.load.name, p.what) for p in pairs(data)] == [("https", "tls")]
    said = next(line for line in findings(data) if line.startswith("the cost of TLS"))
    assert said.startswith("the cost of TLS: https against clear text (http), connections 10: ")
    tls = (
        r"uvicorn [78],\d{3} req/s with TLS against (9,9|10,0)\d\d in clear text, (19|20|21)% fewer"
    )
    assert re.search(tls, said), said
    # the same CPU for 20 % fewer requests: 25 % more CPU per request
    cpu = r"CPU per request 1\d\d µs against 9\d µs, 2[4-6]% more \(adjusted p = "
    assert re.search(cpu, said), said


def test_one_start_a_side_is_said_by_value_with_the_reason_once(tmp_path: Path):
    loads = [
        {"name": "http", **ONE},
        {"name": "https", "tls": True, **ONE},
    ]
    cells = {
        ("http", s, 10): Spec(10000 + i) for i, s in enumerate(("daphne", "hypercorn", "uvicorn"))
    } | {("https", s, 10): Spec(8000) for s in ("daphne", "hypercorn", "uvicorn")}
    data = _data(build(tmp_path / "o.sqlite", loads, cells, name="tls", repeats=1))
    said = next(line for line in findings(data) if line.startswith("the cost of TLS"))
    assert "adjusted p" not in said and said.count("fewer by value") == 3, said
    assert said.count("1 vs 1 server start: untested") == 1, said
