//! Every load model against a well-behaved in-process server: engine counts equal server counts.

use crate::common;

use common::*;
use serde_json::json;

#[test]
fn closed_keep_alive() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let r = run(&plan(
        srv.port,
        json!({"kind": "closed", "connections": 4, "duration_s": 0.5}),
    ));
    assert!(total(&r, "ok") > 100, "{}", r["totals"]);
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply));
    assert_eq!(all_errors(&r), 0);
    assert_eq!(total(&r, "connections_opened"), 4);
    assert_eq!(
        srv.counts
            .connections
            .load(std::sync::atomic::Ordering::SeqCst),
        4
    );
    assert_eq!(total(&r, "connection_close_replies"), 0);
    assert!(
        r["kinds"][0]["service_us"].is_null(),
        "closed model has no separate service time"
    );
    assert_eq!(r["kinds"][0]["connect_us"]["count"], 4);
    assert_accounting(&r);
}

#[test]
fn closed_pipelined() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let r = run(&plan(
        srv.port,
        json!({"kind": "closed", "connections": 2, "duration_s": 0.5, "pipeline": 8}),
    ));
    assert!(total(&r, "ok") > 100);
    assert_eq!(total(&r, "ok"), srv.n(Action::Reply));
    assert_eq!(all_errors(&r), 0);
    assert!(
        srv.counts
            .pipelined_batches
            .load(std::sync::atomic::Ordering::SeqCst)
            > 0,
        "server never saw pipelined requests"
    );
    assert_accounting(&r);
}

#[test]
fn closed_without_keep_alive_opens_a_connection_per_request() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let mut p = plan(
        srv.port,
        json!({"kind": "closed", "connections": 2, "duration_s": 0.5}),
    );
    p["http"] = json!({"version": "1.1", "keep_alive": false});
    let r = run(&p);
    let ok = total(&r, "ok");
    assert!(ok > 10);
    assert_eq!(ok, srv.n(Action::Reply));
    assert_eq!(total(&r, "connections_opened"), ok);
    assert_eq!(
        srv.counts
            .connections
            .load(std::sync::atomic::Ordering::SeqCst),
        ok
    );
    assert_eq!(total(&r, "connection_close_replies"), ok);
    assert_eq!((all_errors(&r), total(&r, "idle_close")), (0, 0));
}

#[test]
fn rate_http10_one_request_per_connection() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let mut p = plan(
        srv.port,
        json!({"kind": "rate", "rate": 200, "duration_s": 0.5, "arrival": "uniform"}),
    );
    p["http"] = json!({"version": "1.0", "keep_alive": false});
    let r = run(&p);
    assert_eq!(
        total(&r, "ok"),
        100,
        "uniform 200/s for 0.5 s is exactly 100 arrivals"
    );
    assert_eq!(srv.n(Action::Reply), 100);
    assert_eq!(total(&r, "connections_opened"), 100);
    assert_eq!(total(&r, "connection_close_replies"), 100);
    assert_eq!(r["kinds"][0]["service_us"]["count"], 100);
    // Corrected latency includes connect and lag: each arrival opens its own connection, so
    // Σ latency ≥ Σ service + Σ connect (fails if latency ran from the connect's end or the
    // actual send). The server stall test (stall.rs) checks the corrected percentiles.
    assert_latency_holds_connects(&r, "rate, HTTP/1.0, a connection per request");
    assert_eq!(all_errors(&r), 0);
}

#[test]
fn conn_rate_ten_calls_keep_alive_and_pipelined() {
    for pipeline in [false, true] {
        let srv = TestServer::start(|_, _| Action::Reply);
        let p = plan(
            srv.port,
            json!({"kind": "conn_rate", "rate": 40, "connections_total": 20, "calls": 10, "pipeline": pipeline}),
        );
        let r = run(&p);
        assert_eq!(total(&r, "ok"), 200, "pipeline {pipeline}");
        assert_eq!(srv.n(Action::Reply), 200);
        assert_eq!(total(&r, "connections_opened"), 20);
        assert_eq!(
            srv.counts
                .connections
                .load(std::sync::atomic::Ordering::SeqCst),
            20
        );
        assert_eq!(all_errors(&r), 0);
        if pipeline {
            assert!(
                srv.counts
                    .pipelined_batches
                    .load(std::sync::atomic::Ordering::SeqCst)
                    > 0
            );
        }
    }
}

#[test]
fn rate_calls_over_http10_reconnect_for_each_call() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let mut p = plan(
        srv.port,
        json!({"kind": "rate", "rate": 50, "connections_total": 5, "calls": 3}),
    );
    p["http"] = json!({"version": "1.0", "keep_alive": false});
    let r = run(&p);
    assert_eq!(total(&r, "ok"), 15);
    assert_eq!(total(&r, "connections_opened"), 15);
    assert_eq!(all_errors(&r), 0);
}

#[test]
fn sessions_small_scale() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let p = plan(
        srv.port,
        json!({"kind": "sessions", "users_per_s": 40, "duration_s": 0.5, "requests": 3, "think_s": 0.1}),
    );
    let r = run(&p);
    assert_eq!(total(&r, "ok"), 60);
    assert_eq!(srv.n(Action::Reply), 60);
    assert_eq!(total(&r, "connections_opened"), 20);
    assert_eq!(all_errors(&r), 0);
    assert!(r["kinds"][0]["service_us"]["count"] == 60);
    // Think time keeps users connected: ~20 users over 0.7 s each, so more than one is open at once.
    assert!(total(&r, "peak_open_connections") > 1);
    assert!(
        r["elapsed_s"].as_f64().unwrap() >= 0.67,
        "last user arrives at 0.475 s and thinks twice for 0.1 s"
    );
}

#[test]
fn sessions_user_resumes_after_server_closes_during_think() {
    // Every 2nd request's reply closes: the user must come back on a new connection.
    let srv = TestServer::start(|n, _| {
        if n % 2 == 1 {
            Action::CloseAfterReply
        } else {
            Action::Reply
        }
    });
    let p = plan(
        srv.port,
        json!({"kind": "sessions", "users_per_s": 20, "duration_s": 0.25, "requests": 4, "think_s": 0.05}),
    );
    let r = run(&p);
    assert_eq!(total(&r, "ok"), 20);
    assert_eq!(total(&r, "idle_close"), srv.n(Action::CloseAfterReply));
    assert_eq!(all_errors(&r), 0);
}

#[test]
fn count_is_exact() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let r = run(&plan(
        srv.port,
        json!({"kind": "count", "requests": 137, "concurrency": 5}),
    ));
    assert_eq!(total(&r, "ok"), 137);
    assert_eq!(total(&r, "requests_sent"), 137);
    assert_eq!(srv.n(Action::Reply), 137);
    assert_eq!(total(&r, "connections_opened"), 5);
}

#[test]
fn weighted_kinds_are_measured_separately() {
    let quiet = Quiet::start();
    let srv = TestServer::start(|_, _| Action::Reply);
    let mut p = plan(
        srv.port,
        json!({"kind": "closed", "connections": 4, "duration_s": 1.0}),
    );
    p["requests"] = json!([
        {"name": "fast", "path": "/fast", "weight": 3, "expect": {"status": 200, "body": "fast"}},
        {"name": "slow", "path": "/slow", "weight": 1, "expect": {"status": 200, "body_len": 4}},
    ]);
    let r = run(&p);
    let (fast, slow) = (&r["kinds"][0], &r["kinds"][1]);
    assert_eq!(
        (fast["name"].as_str(), slow["name"].as_str()),
        (Some("fast"), Some("slow"))
    );
    assert_eq!(fast["ok"].as_u64().unwrap(), srv.counts.path("/fast"));
    assert_eq!(slow["ok"].as_u64().unwrap(), srv.counts.path("/slow"));
    assert!(slow["ok"].as_u64().unwrap() > 5);
    assert!(fast["ok"].as_u64() > slow["ok"].as_u64(), "weight 3:1");
    assert!(slow["latency_us"]["p50"].as_u64().unwrap() >= 30_000);
    let fast_p50 = fast["latency_us"]["p50"].as_u64().unwrap();
    quiet.bound(fast_p50 < 30_000, || format!("fast p50 {fast_p50} µs"));
    assert_eq!(all_errors(&r), 0);
}

#[test]
fn chunked_and_read_until_close_bodies() {
    let srv = TestServer::start(|n, _| {
        if n % 2 == 0 {
            Action::Chunked
        } else {
            Action::UntilClose
        }
    });
    let r = run(&plan(
        srv.port,
        json!({"kind": "count", "requests": 40, "concurrency": 2}),
    ));
    assert_eq!(total(&r, "ok"), 40);
    assert_eq!(all_errors(&r), 0);
    assert_eq!(
        total(&r, "connection_close_replies"),
        srv.n(Action::UntilClose)
    );
    assert_eq!(
        total(&r, "idle_close"),
        0,
        "a read-until-close body is no idle close"
    );
}

#[test]
fn threads_merge_histograms() {
    let quiet = Quiet::start();
    let srv = TestServer::start(|_, _| Action::Reply);
    let mut p = plan(
        srv.port,
        json!({"kind": "count", "requests": 300, "concurrency": 4}),
    );
    p["threads"] = json!(2);
    let r = run(&p);
    assert_eq!(total(&r, "ok"), 300);
    assert_eq!(r["kinds"][0]["latency_us"]["count"], 300);
    // Each thread did its own share: two threads ran, each got replies, and they add up (the
    // plan's `threads` alone would say 2 whatever ran).
    let per: Vec<u64> = r["cost"]["thread_cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["responses"].as_u64().unwrap())
        .collect();
    assert_eq!(per.len(), 2, "{}", r["cost"]);
    assert!(per.iter().all(|&n| n > 0), "{per:?}");
    assert_eq!(per.iter().sum::<u64>(), 300);
    // The turnaround histograms merge across threads too: one per request after a reply on its
    // connection (300 requests on 4 connections).
    assert_eq!(total(&r, "connections_opened"), 4);
    assert_eq!(r["totals"]["turnaround_us"]["count"], 296);
    let turnaround = r["totals"]["turnaround_us"]["p50"].as_f64().unwrap();
    quiet.bound(turnaround < 1000.0, || {
        format!("turnaround p50 {turnaround} µs")
    });
    // More threads than workers: the idle thread must not hold the run up.
    p["model"] = json!({"kind": "count", "requests": 50, "concurrency": 1});
    p["threads"] = json!(3);
    let t0 = std::time::Instant::now();
    let r2 = run(&p);
    assert_eq!(total(&r2, "ok"), 50);
    let took = t0.elapsed().as_secs_f64();
    quiet.bound(took < 2.0, || {
        format!("50 requests on 3 threads took {took:.2} s")
    });
    let tl: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["ok"].as_u64().unwrap())
        .sum();
    assert_eq!(tl, 300);
}
