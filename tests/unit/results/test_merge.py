"""Merging load hosts' results: histograms added exactly (the merged histogram holds every value
of every host), counters summed, timelines summed by second, saturation kept with the host named,
and nothing made up where no exact merge exists."""

from __future__ import annotations

import random

import pytest
from hdrh.histogram import HdrHistogram

from wsgibench.results.engine_plan import EnginePlan
from wsgibench.results.engine_result import EngineResult
from wsgibench.results.merge import merge_results


def _hist(values: list[int]) -> dict:
    h = HdrHistogram(1, 3_600_000_000, 3)
    for v in values:
        h.record_value(v)
    return {"count": len(values), "min": 0, "mean": 0.0, "p50": 0, "p90": 0, "p99": 0,
            "p999": 0, "max": 0, "stdev": 0.0, "hdr": h.encode().decode()}  # fmt: skip


def _timeline(ok: int, errors: dict) -> list[dict]:
    first, second = ok // 2, ok - ok // 2
    return [
        {"t_s": 0, "completed": first, "ok": first, "errors": {}, "open_connections": 2,
         "p50_us": 100, "p99_us": 200},
        {"t_s": 1, "completed": second, "ok": second, "errors": errors, "open_connections": 2,
         "p50_us": 100, "p99_us": 200},
    ]  # fmt: skip


def _doc(values: list[int], ok: int, errors: dict, saturated: bool = False, start=100.0) -> dict:
    return {
        "format_version": 1,
        "engine": {"name": "wsgibench-engine", "version": "0.1.0", "protocol_version": 1},
        "plan": {
            "target": {"host": "127.0.0.1", "port": 8080},
            "model": {"kind": "closed", "connections": 2, "duration_s": 2},
        },
        "started_unix_s": start,
        "elapsed_s": 2.0,
        "totals": {
            "requests_sent": ok + sum(errors.values()),
            "responses": ok,
            "ok": ok,
            "errors": errors,
            "bad_status_codes": {"503": errors.get("bad_status", 0)},
            "idle_close": 1,
            "connections_opened": 2,
            "connection_close_replies": 0,
            "bytes_received": 100 * ok,
            "rps_ok": ok / 2,
            "window_s": 2.0,
            "ok_in_window": ok - 1,
            "completed_after_window": 1,
            "turnaround_us": {"count": ok, "mean": 10.0, "p50": 9, "p99": 30},
        },  # fmt: skip
        "kinds": [
            {
                "name": "pong",
                "requests_sent": ok,
                "responses": ok,
                "ok": ok,
                "errors": errors,
                "bad_status_codes": {},
                "latency_us": _hist(values),
                "service_us": None,
                "connect_us": _hist([50, 60]),
            }
        ],  # fmt: skip
        "timeline": _timeline(ok, errors),
        "cost": {"user_s": 0.5, "sys_s": 0.25, "cpu_fraction": 0.4, "threads": 1},
        "schedule": {"lag_p99_us": 0, "lag_max_us": 0},
        "saturated": saturated,
        "saturation_reasons": ["engine CPU 97 %"] if saturated else [],
    }


def test_merged_histogram_is_the_exact_sum_of_the_hosts():
    rng = random.Random(3)
    values = [[rng.randint(20, 90_000) for _ in range(n)] for n in (500, 800, 1_200)]
    docs = [_doc(v, len(v), {}) for v in values]
    merged = EngineResult.from_dict(
        merge_results(EnginePlan.from_dict(docs[0]["plan"]), docs, [1.0, 1.0, 1.001], "abc")
    )
    hist = HdrHistogram.decode(merged.kinds[0].latency.hdr)
    expected = HdrHistogram(1, 3_600_000_000, 3)
    for v in sum(values, []):
        expected.record_value(v)
    assert hist.get_total_count() == expected.get_total_count() == 2_500
    for it in expected.get_recorded_iterator():  # every bucket, count for count
        assert hist.get_count_at_value(it.value_iterated_to) == it.count_at_value_iterated_to
    lat = merged.kinds[0].latency
    assert lat.p99 == expected.get_value_at_percentile(99)
    assert lat.p50 == expected.get_value_at_percentile(50)
    assert merged.kinds[0].connect.count == 6


def test_counters_add_up_and_errors_keep_their_class():
    docs = [_doc([100] * 10, 10, {"timeout": 2}), _doc([100] * 5, 5, {"bad_status": 1})]
    merged = EngineResult.from_dict(
        merge_results(EnginePlan.from_dict(docs[0]["plan"]), docs, [5.0, 5.002], "ab")
    )
    t = merged.totals
    assert (t.ok, t.requests_sent, t.idle_close, t.connections_opened) == (15, 18, 2, 4)
    assert t.errors == {"timeout": 2, "bad_status": 1} and t.bad_status_codes == {"503": 1}
    assert (t.ok_in_window, t.completed_after_window, t.window_s) == (13, 2, 2.0)
    assert t.rps_ok == pytest.approx(13 / 2.0)
    assert t.turnaround_us == {"count": 15, "mean": 10.0}  # no made-up percentiles
    assert merged.started_unix_s == 5.0 and merged.elapsed_s == pytest.approx(2.002)
    assert merged.cost.cpu_s == pytest.approx(1.5) and merged.cost.threads == 2
    assert [s.ok for s in merged.timeline] == [7, 8]
    assert merged.timeline[1].errors == {"timeout": 2, "bad_status": 1}
    assert merged.timeline[0].p50_us is None and merged.timeline[0].p99_us is None


def test_one_saturated_host_saturates_the_cell_and_is_named():
    docs = [_doc([1], 1, {}), _doc([1], 1, {}, saturated=True)]
    merged = merge_results(
        EnginePlan.from_dict(docs[0]["plan"]), docs, [0.0, 0.0], ["tcp://a:1", "tcp://b:2"]
    )
    assert merged["saturated"] is True
    assert merged["saturation_reasons"] == ["load host tcp://b:2: engine CPU 97 %"]


def test_hosts_and_starts_must_match():
    with pytest.raises(ValueError):
        merge_results({}, [_doc([1], 1, {})], [0.0, 1.0], ["a"])
    with pytest.raises(ValueError):
        merge_results({}, [], [], [])


def test_show_and_the_report_say_where_the_load_came_from():
    from wsgibench.results.summary import load_hosts_text

    assert load_hosts_text({}) == ""
    env = {
        "load_hosts": {
            "cluster": "tcp://10.0.0.1:8786",
            "skew_bound_s": 0.005,
            "hosts": [
                {"address": "tcp://10.0.0.11:4000", "hostname": "a", "clock_offset_s": -0.0021},
                {"address": "tcp://10.0.0.12:4000", "hostname": "b", "clock_offset_s": 0.0004},
            ],
        }
    }
    text = load_hosts_text(env)
    assert text.startswith("2 load host(s) from tcp://10.0.0.1:8786: tcp://10.0.0.11:4000 (a)")
    assert "largest clock offset 2.10 ms" in text and "more than 5 ms apart is invalid" in text


def _protocols(values: list[int], handshakes: int, failed: int, h2_limit: int) -> dict:
    return {
        "websocket": {
            "handshakes_ok": handshakes,
            "handshake_us": _hist(values),
            "handshake_failures": {"status": failed},
            "handshake_statuses": {"403": failed},
            "close_codes": {"1000": handshakes},
            "protocol_errors": {},
        },
        "http2": {
            "connections": handshakes,
            "streams": 10 * handshakes,
            "goaways": {"0": 1},
            "max_concurrent_streams": h2_limit,
        },  # fmt: skip
        "tls": {
            "version": "TLSv1_3",
            "verified": True,
            "handshakes": handshakes,
            "resumed": 1,
            "handshake_us": {"p50": 300, "p99": 900, "max": 700 + handshakes},
            "alpn": {"h2": handshakes},
            "failures": {"alpn": failed},
        },  # fmt: skip
    }


def test_protocol_objects_of_the_hosts_join_exactly():
    a = {**_doc([5], 1, {}), **_protocols([100, 200], 2, 1, 100)}
    b = {**_doc([5], 1, {}), **_protocols([300], 3, 0, 50)}
    b["tls"]["verified"] = False
    merged = merge_results(EnginePlan.from_dict(a["plan"]), [a, b], [1.0, 1.0], "ab")
    ws, h2, tls = merged["websocket"], merged["http2"], merged["tls"]
    assert ws["handshakes_ok"] == 5 and ws["handshake_failures"] == {"status": 1}
    assert ws["handshake_statuses"] == {"403": 1} and ws["close_codes"] == {"1000": 5}
    got = HdrHistogram.decode(ws["handshake_us"]["hdr"])
    assert got.get_total_count() == 3 and ws["handshake_us"]["count"] == 3
    assert got.get_max_value() == pytest.approx(300, rel=1e-3)
    assert (h2["connections"], h2["streams"], h2["goaways"]) == (5, 50, {"0": 2})
    assert h2["max_concurrent_streams"] == 50  # the smallest the hosts were told
    assert (tls["handshakes"], tls["resumed"], tls["alpn"]) == (5, 2, {"h2": 5})
    assert tls["version"] == "TLSv1_3" and tls["verified"] is False  # not every host verified
    # No histogram of TLS handshakes: only their maximum joins exactly.
    assert tls["handshake_us"] == {"p50": None, "p99": None, "max": 703}
    result = EngineResult.from_dict(merged)
    assert result.websocket is not None and result.websocket.handshakes_ok == 5
    assert result.tls is not None and result.tls.handshake_p50_us is None


def test_a_document_without_protocol_objects_merges_without_them():
    docs = [_doc([1], 1, {}), _doc([2], 1, {})]
    merged = merge_results(EnginePlan.from_dict(docs[0]["plan"]), docs, [1.0, 1.0], "ab")
    assert not {"websocket", "http2", "tls"} & set(merged)


def test_timelines_merge_on_the_controllers_clock():
    # The second host started 0.7 s after the first: its second 0 lies mostly in the first
    # host's second 1, and counts there; a host 0.2 s late keeps its seconds.
    a, b = _doc([100], 10, {}), _doc([100], 10, {})
    late = merge_results(EnginePlan.from_dict(a["plan"]), [a, b], [5.0, 5.7], "ab")
    assert [s["ok"] for s in late["timeline"]] == [5, 10, 5]
    near = merge_results(EnginePlan.from_dict(a["plan"]), [a, b], [5.0, 5.2], "ab")
    assert [s["ok"] for s in near["timeline"]] == [10, 10]
