//! Servers that misbehave on purpose: each error class must be counted exactly as the server acted.

use crate::common;

use std::time::Instant;

use common::*;
use serde_json::json;

fn closed(port: u16, conns: u64, secs: f64) -> serde_json::Value {
    plan(
        port,
        json!({"kind": "closed", "connections": conns, "duration_s": secs}),
    )
}

#[test]
fn close_after_reply_is_idle_close_not_error() {
    let srv = TestServer::start(|n, _| {
        if n % 5 == 4 {
            Action::CloseAfterReply
        } else {
            Action::Reply
        }
    });
    let r = run(&closed(srv.port, 2, 0.5));
    let closes = srv.n(Action::CloseAfterReply);
    assert!(closes > 5);
    assert_eq!(total(&r, "idle_close"), closes);
    assert_eq!(all_errors(&r), 0);
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply) + closes);
    // One reconnect per close, except for closes after the duration ended.
    let opened = total(&r, "connections_opened");
    assert!(
        (closes..=closes + 2).contains(&opened),
        "opened {opened}, closes {closes}"
    );
}

#[test]
fn close_with_request_outstanding_is_closed_before_response() {
    let srv = TestServer::start(|n, _| {
        if n % 5 == 4 {
            Action::CloseNoReply
        } else {
            Action::Reply
        }
    });
    let r = run(&closed(srv.port, 2, 0.5));
    assert!(srv.n(Action::CloseNoReply) > 5);
    // A close of a reused keep-alive connection before any byte of the reply to a GET is an
    // unannounced close (re-sent once); on a fresh connection, or of a re-sent GET, an error.
    assert_eq!(
        err(&r, "closed_before_response") + total(&r, "unannounced_closes"),
        srv.n(Action::CloseNoReply)
    );
    assert_eq!(total(&r, "resent"), total(&r, "unannounced_closes"));
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply));
    assert_eq!(all_errors(&r), err(&r, "closed_before_response"));
    assert_eq!(total(&r, "idle_close"), 0);
    assert_accounting(&r);
}

#[test]
fn reset_is_counted() {
    let srv = TestServer::start(|n, _| {
        if n % 5 == 4 {
            Action::Reset
        } else {
            Action::Reply
        }
    });
    let r = run(&closed(srv.port, 2, 0.5));
    assert!(srv.n(Action::Reset) > 5);
    // As for FIN: a reset of a reused connection with a GET outstanding is re-sent once.
    assert_eq!(
        err(&r, "reset") + total(&r, "unannounced_closes"),
        srv.n(Action::Reset)
    );
    assert_eq!(total(&r, "resent"), total(&r, "unannounced_closes"));
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply));
    assert_eq!(all_errors(&r), err(&r, "reset"));
    assert_accounting(&r);
}

#[test]
fn stall_times_out_and_run_stays_bounded() {
    let srv = TestServer::start(|n, _| {
        if n % 10 == 9 {
            Action::Stall
        } else {
            Action::Reply
        }
    });
    let mut p = closed(srv.port, 2, 1.0);
    p["timeout_s"] = json!(0.3);
    let t0 = Instant::now();
    let r = run(&p);
    let took = t0.elapsed().as_secs_f64();
    assert!(srv.n(Action::Stall) >= 2);
    assert_eq!(err(&r, "timeout"), srv.n(Action::Stall));
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply));
    assert!(
        took < 1.0 + 0.3 + 0.5,
        "took {took} s, beyond duration + timeout"
    );
    assert_accounting(&r);
}

#[test]
fn server_that_only_stalls_ends_at_duration_plus_timeout() {
    let srv = TestServer::start(|_, _| Action::Stall);
    let mut p = closed(srv.port, 3, 0.3);
    p["timeout_s"] = json!(0.5);
    let t0 = Instant::now();
    let r = run(&p);
    let took = t0.elapsed().as_secs_f64();
    assert_eq!(err(&r, "timeout"), 3);
    assert!(took < 0.3 + 0.5 + 0.5, "took {took}");
}

#[test]
fn wrong_body_is_bad_body() {
    let srv = TestServer::start(|n, _| {
        if n % 4 == 3 {
            Action::WrongBody
        } else {
            Action::Reply
        }
    });
    let r = run(&closed(srv.port, 2, 0.5));
    assert!(srv.n(Action::WrongBody) > 5);
    assert_eq!(err(&r, "bad_body"), srv.n(Action::WrongBody));
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply));
    assert_eq!(
        total(&r, "responses"),
        srv.n(Action::Reply) + srv.n(Action::WrongBody)
    );
    assert_eq!(
        total(&r, "connections_opened"),
        2,
        "a bad body does not cost the connection"
    );
}

#[test]
fn status_500_is_bad_status_with_code_counts() {
    let srv = TestServer::start(|n, _| {
        if n % 3 == 2 {
            Action::Status500
        } else {
            Action::Reply
        }
    });
    let r = run(&closed(srv.port, 2, 0.5));
    let n500 = srv.n(Action::Status500);
    assert!(n500 > 5);
    assert_eq!(err(&r, "bad_status"), n500);
    assert_eq!(r["totals"]["bad_status_codes"], json!({"500": n500}));
    assert_eq!(r["kinds"][0]["bad_status_codes"], json!({"500": n500}));
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply));
}

#[test]
fn garbage_is_protocol_error() {
    let srv = TestServer::start(|n, _| {
        if n % 5 == 4 {
            Action::Garbage
        } else {
            Action::Reply
        }
    });
    let r = run(&closed(srv.port, 2, 0.5));
    assert!(srv.n(Action::Garbage) > 5);
    assert_eq!(err(&r, "protocol_error"), srv.n(Action::Garbage));
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply));
    assert_eq!(all_errors(&r), err(&r, "protocol_error"));
}

#[test]
fn slow_headers_under_timeout_are_ok() {
    let srv = TestServer::start(|_, _| Action::SlowHeaders);
    let r = run(&plan(
        srv.port,
        json!({"kind": "count", "requests": 6, "concurrency": 3}),
    ));
    assert_eq!(total(&r, "ok"), 6);
    assert_eq!(all_errors(&r), 0);
    assert!(r["kinds"][0]["latency_us"]["min"].as_u64().unwrap() >= 100_000);
}

#[test]
fn refused_connections_are_counted_per_request() {
    let port = TestServer::closed_port();
    let r = run(&plan(
        port,
        json!({"kind": "count", "requests": 10, "concurrency": 2}),
    ));
    assert_eq!(err(&r, "connect_refused"), 10);
    assert_eq!(
        (
            total(&r, "ok"),
            total(&r, "requests_sent"),
            total(&r, "connections_opened")
        ),
        (0, 0, 0)
    );
}

#[test]
fn refused_rate_model_counts_each_arrival() {
    let port = TestServer::closed_port();
    let r = run(&plan(
        port,
        json!({"kind": "rate", "rate": 100, "connections_total": 25}),
    ));
    assert_eq!(err(&r, "connect_refused"), 25);
    assert_eq!(
        r["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["errors"]["connect_refused"].as_u64().unwrap_or(0))
            .sum::<u64>(),
        25
    );
}

#[test]
fn mixed_misbehaviour_under_pipelining_keeps_accounting() {
    // Errors under pipelining also break the requests queued behind them; each request still
    // ends exactly once.
    let srv = TestServer::start(|n, _| match n % 7 {
        3 => Action::Status500,
        5 => Action::WrongBody,
        _ => Action::Reply,
    });
    let r = run(&plan(
        srv.port,
        json!({"kind": "closed", "connections": 2, "duration_s": 0.5, "pipeline": 4}),
    ));
    assert_eq!(err(&r, "bad_status"), srv.n(Action::Status500));
    assert_eq!(err(&r, "bad_body"), srv.n(Action::WrongBody));
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply));
    assert_accounting(&r);
}

#[test]
fn bad_plans_and_remote_targets_are_refused() {
    let p = plan(
        1,
        json!({"kind": "closed", "connections": 0, "duration_s": 1}),
    );
    assert!(matches!(
        wsgibench_engine::run_value(&p),
        Err(wsgibench_engine::RunError::Plan(_))
    ));
    let mut p = plan(
        80,
        json!({"kind": "count", "requests": 1, "concurrency": 1}),
    );
    p["target"]["host"] = json!("192.0.2.1");
    match wsgibench_engine::run_value(&p) {
        Err(wsgibench_engine::RunError::Plan(e)) => assert!(e.0.contains("loopback")),
        other => panic!("remote target not refused: {other:?}"),
    }
}
