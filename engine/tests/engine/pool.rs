//! Rate on a fixed pool of keep-alive connections (wrk2's model): the pool's connections carry
//! every arrival, a request with no free connection waits in the client and its latency counts
//! from when it was due, lost connections are replaced, and arrivals that wait past the request
//! timeout time out.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

fn pool_plan(port: u16, rate: f64, duration_s: f64, pool: u64) -> Value {
    plan(
        port,
        json!({"kind": "rate", "rate": rate, "duration_s": duration_s, "pool": pool}),
    )
}

fn kind(r: &Value) -> &Value {
    &r["kinds"][0]
}

#[test]
fn the_pool_carries_every_arrival_on_its_own_connections() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let r = run(&pool_plan(srv.port, 400.0, 0.5, 4));
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 200, "{}", r["totals"]);
    assert_eq!(all_errors(&r), 0, "{}", r["totals"]);
    assert_eq!(total(&r, "connections_opened"), 4);
    assert_eq!(total(&r, "peak_open_connections"), 4);
    assert_eq!(total(&r, "queue_timeouts"), 0);
}

#[test]
fn a_stall_queues_arrivals_in_the_client_and_their_wait_is_latency() {
    // Both connections are held 200 ms by the server; the ~40 arrivals due meanwhile wait for
    // them in the client: no new connection opens, and their latency holds the wait while
    // their service time (from the send) does not.
    let quiet = Quiet::start();
    let srv = TestServer::start(stall_then_answer(
        Duration::from_millis(100),
        Duration::from_millis(200),
    ));
    let r = run(&pool_plan(srv.port, 200.0, 0.6, 2));
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 120, "{}", r["totals"]);
    assert_eq!(total(&r, "connections_opened"), 2);
    assert_eq!(total(&r, "peak_open_connections"), 2);
    let k = kind(&r);
    let (lat_p99, svc_p50) = (
        k["latency_us"]["p99"].as_u64().unwrap(),
        k["service_us"]["p50"].as_u64().unwrap(),
    );
    assert!(
        lat_p99 >= 150_000,
        "latency p99 {lat_p99} µs lacks the wait"
    );
    quiet.bound(svc_p50 < 20_000, || format!("service p50 {svc_p50} µs"));
    let (lat, svc) = (sum_us(&k["latency_us"]), sum_us(&k["service_us"]));
    // ~40 arrivals waited 0-200 ms for a connection: seconds of latency beyond service.
    assert!(lat - svc > 2e6, "Σlatency {lat} - Σservice {svc} µs");
}

#[test]
fn connections_the_server_closes_are_replaced() {
    let srv = TestServer::start(|_, _| Action::CloseAfterReply);
    let r = run(&pool_plan(srv.port, 200.0, 0.3, 3));
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 60, "{}", r["totals"]);
    assert_eq!(all_errors(&r), 0, "{}", r["totals"]);
    // Every reply closes its connection; each next arrival opens one.
    let opened = total(&r, "connections_opened");
    assert!((57..=63).contains(&opened), "{opened} connections");
    assert!(total(&r, "peak_open_connections") <= 3);
}

#[test]
fn arrivals_waiting_past_the_timeout_time_out_unsent() {
    // The server never answers: the one connection's request times out, and so do the
    // arrivals queued behind it, each counted once.
    let srv = TestServer::start(|_, _| Action::Stall);
    let mut p = pool_plan(srv.port, 100.0, 0.3, 1);
    p["timeout_s"] = json!(0.2);
    let r = run(&p);
    assert_accounting(&r);
    assert_eq!(total(&r, "ok"), 0);
    assert_eq!(err(&r, "timeout"), 30, "{}", r["totals"]);
    let (sent, queued) = (total(&r, "requests_sent"), total(&r, "queue_timeouts"));
    assert_eq!(sent + queued, 30, "{}", r["totals"]);
    assert!(queued > 0 && sent > 0, "{}", r["totals"]);
}
