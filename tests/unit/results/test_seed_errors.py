"""Errors as wrk, httperf and ab counted them, from engine results built here: one test per rule
per tool (results/seed_errors.py, docs/measurement.md)."""

from __future__ import annotations

from typing import Any

import pytest

from wsgibench.results.engine_result import ERROR_CLASSES, EngineResult
from wsgibench.results.seed_errors import TOOLS, ToolErrors, median_rate, tool_errors

CLOSED = {"kind": "closed", "connections": 10, "duration_s": 1}
# The behaviour check of a server that answers a second request on a connection.
KEEPS = {"pong": True, "http10": True, "keep_alive": True, "pipelining": True, "detail": ""}
CLOSED_CONN = "keep-alive: ConnectionError: connection closed before a whole response"


def result(
    ok: int = 1000,
    errors: dict[str, int] | None = None,
    codes: dict[str, int] | None = None,
    model: dict[str, Any] | None = None,
    keep_alive: bool = True,
    **totals: int,
) -> EngineResult:
    """One repeat: `ok` valid replies, errors by class, and any other totals (closes, ...)."""
    errs = {c: 0 for c in ERROR_CLASSES} | (errors or {})
    responses = ok + errs["bad_status"] + errs["bad_body"]
    counts = {
        "requests_sent": ok + sum(errs.values()),
        "responses": responses,
        "ok": ok,
        "errors": errs,
        "bad_status_codes": codes or {},
    }
    return EngineResult.from_dict(
        {
            "format_version": 1,
            "engine": {"version": "test"},
            "plan": {
                "target": {"host": "127.0.0.1", "port": 8080},
                "model": model or CLOSED,
                "http": {"version": "1.1", "keep_alive": keep_alive},
                "requests": [{"name": "pong", "expect": {"status": 200, "body": "Pong!"}}],
            },
            "elapsed_s": 1.0,
            "totals": {**counts, "rps_ok": float(ok), **totals},
            "kinds": [{"name": "pong", **counts}],
            "cost": {"user_s": 0.1, "sys_s": 0.1},
        }
    )


def no_keep_alive(head: str, detail: str = CLOSED_CONN) -> dict[str, Any]:
    """The check of a server that fails the keep-alive test, with its pong reply's head."""
    return KEEPS | {"keep_alive": False, "pipelining": False, "detail": detail, "wire_head": head}


SILENT = no_keep_alive("HTTP/1.1 200 OK | content-length, content-type")


def counts(r: EngineResult, caps: dict[str, Any] | None = KEEPS) -> dict[str, ToolErrors]:
    return {tool: tool_errors(r, caps, tool) for tool in TOOLS}


# --- the counting itself -------------------------------------------------------------------------


def test_rate_is_errors_over_every_request_the_tool_saw_end():
    t = ToolErrors("wrk", errors=25, requests=75, by_class={"read": 25})
    assert t.rate == 0.25
    assert ToolErrors("wrk", 0, 0, {}).rate == 0.0


def test_tools_name_the_seeds_that_used_them_and_nothing_else_is_a_tool():
    assert TOOLS == {"wrk": ("003", "004"), "httperf": ("000",), "ab": ("001", "002")}
    with pytest.raises(ValueError, match="not 'siege'"):
        tool_errors(result(), KEEPS, "siege")


def test_a_clean_run_is_clean_for_every_tool():
    for t in counts(result()).values():
        assert (t.errors, t.requests, t.rate) == (0, 1000, 0.0)


# --- wrk -----------------------------------------------------------------------------------------


def test_wrk_counts_a_read_error_for_each_unannounced_close_where_we_count_none():
    r = result(unannounced_closes=50, resent=50)
    assert r.totals.error_count == 0
    wrk = tool_errors(r, KEEPS, "wrk")
    assert wrk.by_class["read"] == 50 and wrk.errors == 50
    assert wrk.requests == 1000 and wrk.rate == pytest.approx(50 / 1050)


def test_wrk_counts_a_close_that_came_with_the_reply_in_a_closed_loop_only():
    assert tool_errors(result(idle_close=30), KEEPS, "wrk").by_class["read"] == 30
    rate_model = {"kind": "rate", "rate": 100, "calls": 10, "duration_s": 1}
    assert tool_errors(result(idle_close=30, model=rate_model), KEEPS, "wrk").errors == 0


def test_wrk_reconnects_without_an_error_after_an_announced_close():
    assert tool_errors(result(connection_close_replies=400), KEEPS, "wrk").errors == 0


def test_wrk_meets_a_read_error_on_every_connection_of_the_no_keep_alive_fallback():
    # seed 003: uWSGI --http, "all the responses of wrk were detected as read errors"
    r = result(keep_alive=False, connection_close_replies=1000)
    wrk = tool_errors(r, SILENT, "wrk")
    assert (wrk.by_class["read"], wrk.requests, wrk.rate) == (1000, 1000, 0.5)
    assert r.totals.error_count == 0


def test_wrk_fallback_counts_the_replies_not_last_on_their_connection():
    calls = {"kind": "rate", "rate": 100, "calls": 10, "duration_s": 1}
    r = result(keep_alive=False, model=calls)
    assert tool_errors(r, SILENT, "wrk").by_class["read"] == 900


@pytest.mark.parametrize(
    "head",
    [
        "HTTP/1.1 200 OK | connection, content-length",  # Connection: close
        "HTTP/1.0 200 OK | content-length, content-type",  # HTTP/1.0 without keep-alive
    ],
)
def test_wrk_fallback_counts_nothing_when_the_server_announced_its_close(head):
    r = result(keep_alive=False)
    assert tool_errors(r, no_keep_alive(head), "wrk").errors == 0


def test_wrk_fallback_counts_nothing_when_the_reply_head_was_not_stored():
    r = result(keep_alive=False)
    assert tool_errors(r, no_keep_alive(""), "wrk").errors == 0
    assert tool_errors(r, None, "wrk").errors == 0


def test_a_run_without_keep_alive_of_a_server_that_keeps_alive_costs_wrk_nothing():
    assert tool_errors(result(keep_alive=False), KEEPS, "wrk").errors == 0


def test_wrk_counts_connect_errors_with_the_engines_limits_met_when_connecting():
    errors = {
        "connect_refused": 1,
        "connect_timeout": 2,
        "connect_error": 3,
        "fd_limit": 4,
        "ports_exhausted": 5,
    }
    wrk = tool_errors(result(errors=errors), KEEPS, "wrk")
    assert wrk.by_class["connect"] == 15 and wrk.errors == 15


def test_wrk_counts_resets_cut_replies_and_garbage_as_read_errors():
    errors = {"reset": 3, "closed_before_response": 4, "protocol_error": 5}
    assert tool_errors(result(errors=errors), KEEPS, "wrk").by_class["read"] == 12


def test_wrk_counts_timeouts_as_timeouts():
    wrk = tool_errors(result(errors={"timeout": 7}), KEEPS, "wrk")
    assert (wrk.by_class["timeout"], wrk.errors, wrk.requests) == (7, 7, 1000)


def test_wrk_counts_statuses_above_399_but_no_bad_body():
    r = result(errors={"bad_status": 30, "bad_body": 9}, codes={"500": 20, "302": 10})
    wrk = tool_errors(r, KEEPS, "wrk")
    assert wrk.by_class["non-2xx or 3xx"] == 20 and wrk.errors == 20
    assert wrk.requests == 1019  # the 3xx and the bad bodies were replies to wrk
    unrecorded = result(errors={"bad_status": 5})  # a bad status without its code counts
    assert tool_errors(unrecorded, KEEPS, "wrk").errors == 5


# --- httperf -------------------------------------------------------------------------------------


def test_httperf_counts_a_500_as_a_reply_not_an_error():
    r = result(errors={"bad_status": 20, "bad_body": 3}, codes={"500": 20})
    httperf = tool_errors(r, KEEPS, "httperf")
    assert (httperf.errors, httperf.requests) == (0, 1023)


def test_httperf_classes_timeouts_and_connect_failures_by_errno():
    errors = {
        "timeout": 1,
        "connect_timeout": 2,
        "connect_refused": 3,
        "fd_limit": 4,
        "ports_exhausted": 5,
        "connect_error": 6,
        "protocol_error": 7,
    }
    by_class = tool_errors(result(errors=errors), KEEPS, "httperf").by_class
    assert by_class == {
        "client-timo": 1,
        "socket-timo": 2,
        "connrefused": 3,
        "connreset": 0,
        "fd-unavail": 4,
        "addrunavail": 5,
        "ftab-full": 0,
        "other": 13,
    }


def test_httperf_counts_resets_and_closes_under_a_call_as_connreset():
    r = result(errors={"reset": 2, "closed_before_response": 3}, unannounced_closes=10)
    httperf = tool_errors(r, KEEPS, "httperf")
    assert httperf.by_class["connreset"] == 15 and httperf.requests == 1000


def test_httperf_reads_no_connection_header_announced_closes_cut_calls_short_too():
    r = result(connection_close_replies=40, idle_close=5)
    assert tool_errors(r, KEEPS, "httperf").by_class["connreset"] == 45
    calls = {"kind": "rate", "rate": 100, "calls": 10, "duration_s": 1}
    assert (
        tool_errors(result(connection_close_replies=40, model=calls), KEEPS, "httperf").errors == 0
    )
    announced = no_keep_alive("HTTP/1.1 200 OK | connection, content-length")
    fallback = tool_errors(result(keep_alive=False, model=calls), announced, "httperf")
    assert fallback.by_class["connreset"] == 900  # wrk: 0, the close was announced


def test_httperf_times_out_on_a_server_that_never_answers_a_second_request():
    hangs = no_keep_alive("HTTP/1.1 200 OK | content-length", "keep-alive: TimeoutError: no")
    r = result(keep_alive=False)
    assert tool_errors(r, hangs, "httperf").by_class["client-timo"] == 1000
    assert tool_errors(r, hangs, "wrk").errors == 0  # wrk 4 counts no reply that never comes


# --- ab ------------------------------------------------------------------------------------------


def test_ab_fails_connects_resets_and_lengths_and_counts_non_2xx_apart():
    errors = {
        "connect_refused": 1,
        "fd_limit": 1,
        "reset": 2,
        "closed_before_response": 3,
        "protocol_error": 1,
        "bad_body": 4,
        "bad_status": 30,
    }
    ab = tool_errors(result(errors=errors, codes={"500": 20, "302": 10}), KEEPS, "ab")
    assert ab.by_class == {
        "connect": 2,
        "receive": 2,
        "length": 8,
        "exceptions": 0,
        "non-2xx": 30,
    }
    assert ab.errors == 42 and ab.requests == 1000


def test_ab_without_keep_alive_never_meets_a_server_close():
    r = result(unannounced_closes=50, idle_close=10)
    assert tool_errors(r, KEEPS, "ab").errors == 0
    assert tool_errors(result(keep_alive=False), SILENT, "ab").errors == 0


def test_ab_waits_for_a_reply_that_never_comes_it_counts_no_timeout():
    ab = tool_errors(result(errors={"timeout": 7}), KEEPS, "ab")
    assert (ab.errors, ab.requests) == (0, 1000)


# --- over a cell's repeats -----------------------------------------------------------------------


def test_median_rate_over_the_repeats_that_saw_requests():
    repeats = [result(unannounced_closes=n) for n in (0, 50, 1000)]
    assert median_rate(repeats, KEEPS, "wrk") == pytest.approx(50 / 1050)
    assert median_rate([result(ok=0)], KEEPS, "wrk") is None
