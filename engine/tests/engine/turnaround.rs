//! The closed loops' own turnaround (`totals.turnaround_us`): from a reply completing on a
//! connection to the write of the next request on it.

use crate::common;

use common::*;
use serde_json::{json, Value};

/// The turnaround summary: one sample per request that followed a reply on its connection,
/// i.e. every request but each connection's first when nothing closes; small against the
/// in-process server (the engine only parses the reply and writes the next request).
fn assert_turnaround(r: &Value, what: &str, quiet: &Quiet) {
    let t = &r["totals"]["turnaround_us"];
    let samples = total(r, "requests_sent") - total(r, "connections_opened");
    assert_eq!(t["count"].as_u64(), Some(samples), "{what}: {t}");
    let (mean, p50, p99) = (
        t["mean"].as_f64().unwrap(),
        t["p50"].as_f64().unwrap(),
        t["p99"].as_f64().unwrap(),
    );
    println!("{what}: turnaround {t}");
    assert!(mean > 0.0 && p50 > 0.0 && p99 >= p50, "{what}: {t}");
    quiet.bound(p50 < 1000.0, || {
        format!("{what}: turnaround p50 {p50} µs is not small: {t}")
    });
}

#[test]
fn closed_loop_turnaround_is_present_and_small() {
    let quiet = Quiet::start();
    let srv = TestServer::start(|_, _| Action::Reply);
    let r = run(&plan(
        srv.port,
        json!({"kind": "closed", "connections": 4, "duration_s": 0.5}),
    ));
    assert!(total(&r, "ok") > 100, "{}", r["totals"]);
    assert_eq!((all_errors(&r), total(&r, "connections_opened")), (0, 4));
    assert_turnaround(&r, "closed", &quiet);
}

#[test]
fn turnaround_without_keep_alive_and_in_open_models() {
    // Every request on a connection of its own: none follows a reply on its connection.
    let srv = TestServer::start(|_, _| Action::Reply);
    let mut p = plan(
        srv.port,
        json!({"kind": "count", "requests": 20, "concurrency": 2}),
    );
    p["http"] = json!({"version": "1.1", "keep_alive": false});
    let r = run(&p);
    assert_eq!(total(&r, "ok"), 20);
    let t = &r["totals"]["turnaround_us"];
    assert_eq!(
        (t["count"].as_u64(), t["p50"].as_f64(), t["mean"].as_f64()),
        (Some(0), Some(0.0), Some(0.0)),
        "{t}"
    );
    // Open models send on a schedule, not on replies: no turnaround.
    let r = run(&plan(
        srv.port,
        json!({"kind": "rate", "rate": 100, "connections_total": 10, "calls": 3}),
    ));
    assert_eq!(total(&r, "ok"), 30);
    assert!(r["totals"]["turnaround_us"].is_null(), "{}", r["totals"]);
}
