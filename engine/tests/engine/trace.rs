//! The trace model (an access log replayed): every request of the schedule sent once, of its
//! kind, at its offset over the speed, per second as the schedule says; split across threads and
//! load hosts with nothing lost or sent twice; on a connection each or on a pool.

use crate::common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use common::*;
use serde_json::{json, Value};

const KINDS: [&str; 3] = ["/a", "/b", "/c"];

/// A schedule of 4 log seconds: 20, 5, 60 (a burst), 15 requests, each second's spread evenly
/// over it, kinds in turn; its records and each second's count.
fn burst() -> (Vec<u64>, [u64; 4]) {
    let per_second = [20u64, 5, 60, 15];
    let mut records = Vec::new();
    for (s, &n) in per_second.iter().enumerate() {
        for i in 0..n {
            let offset_us = s as u64 * 1_000_000 + (2 * i + 1) * 1_000_000 / (2 * n);
            records.push((offset_us << 16) | (records.len() as u64 % 3));
        }
    }
    (records, per_second)
}

fn write_schedule(name: &str, records: &[u64]) -> String {
    let path = std::env::temp_dir().join(format!(
        "wsgibench-trace-test-{name}-{}-{}",
        std::process::id(),
        engine_io()
    ));
    let mut bytes = b"WBTRACE1".to_vec();
    for r in records {
        bytes.extend_from_slice(&r.to_le_bytes());
    }
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

fn trace_plan(port: u16, schedule: &str, records: usize, speed: f64) -> Value {
    let mut p = plan(
        port,
        json!({"kind": "trace", "speed": speed, "schedule": schedule,
               "schedule_requests": records, "span_s": 4}),
    );
    p["requests"] = Value::Array(
        KINDS
            .iter()
            .map(|path| {
                json!({"name": format!("GET {path}"), "method": "GET", "path": path,
                       "expect": {"status": 200, "body": &path[1..]}})
            })
            .collect(),
    );
    p
}

/// The result's arrivals per timeline second.
fn arrivals(r: &Value) -> Vec<u64> {
    r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["arrivals"].as_u64().unwrap())
        .collect()
}

fn per_kind_sent(r: &Value) -> Vec<u64> {
    r["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["requests_sent"].as_u64().unwrap())
        .collect()
}

/// Every request sent and answered, each kind as often as the schedule names it, each path as
/// often at the server.
fn assert_mix(r: &Value, srv: &TestServer, records: &[u64]) {
    assert_accounting(r);
    assert_eq!(total(r, "ok"), records.len() as u64, "{}", r["totals"]);
    assert_eq!(all_errors(r), 0, "{}", r["totals"]);
    let want: Vec<u64> = (0..3)
        .map(|k| records.iter().filter(|&&x| x & 0xffff == k).count() as u64)
        .collect();
    assert_eq!(per_kind_sent(r), want);
    for (path, n) in KINDS.iter().zip(&want) {
        assert_eq!(srv.counts.path(path), *n, "{path}");
    }
}

#[test]
fn every_request_goes_once_of_its_kind_and_each_second_has_the_schedules_count() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let (records, per_second) = burst();
    let schedule = write_schedule("mix", &records);
    let r = run(&trace_plan(srv.port, &schedule, records.len(), 1.0));
    assert_mix(&r, &srv, &records);
    assert_eq!(arrivals(&r)[..4], per_second);
    assert!(arrivals(&r)[4..].iter().all(|&n| n == 0));
    assert_eq!(r["totals"]["window_s"], 4.0);
    assert!(r["kinds"][0]["service_us"].is_object(), "an open model");
}

#[test]
fn a_speed_of_two_puts_two_log_seconds_in_each_second() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let (records, s) = burst();
    let schedule = write_schedule("speed", &records);
    let mut p = trace_plan(srv.port, &schedule, records.len(), 2.0);
    p["threads"] = json!(3);
    let r = run(&p);
    assert_mix(&r, &srv, &records);
    assert_eq!(arrivals(&r)[..2], [s[0] + s[1], s[2] + s[3]]);
    assert!(
        (r["elapsed_s"].as_f64().unwrap() - 2.0).abs() < 0.5,
        "{}",
        r["elapsed_s"]
    );
}

#[test]
fn requests_reach_the_server_at_their_offsets_over_the_speed() {
    let seen: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
    let log = seen.clone();
    let srv = TestServer::start(move |_, req| {
        log.lock().unwrap().push((Instant::now(), req.path.clone()));
        Action::Reply
    });
    let (records, _) = burst();
    let schedule = write_schedule("timing", &records);
    let speed = 4.0;
    let r = run(&trace_plan(srv.port, &schedule, records.len(), speed));
    assert_mix(&r, &srv, &records);
    let seen = seen.lock().unwrap();
    let t0 = seen.iter().map(|(t, _)| *t).min().unwrap();
    let mut at: Vec<f64> = seen
        .iter()
        .map(|(t, _)| t.duration_since(t0).as_secs_f64())
        .collect();
    at.sort_by(f64::total_cmp);
    let first_us = (records[0] >> 16) as f64;
    // Each request's arrival, from the first one's, is its offset's, over the speed, give or
    // take what a shared test machine adds to one connect (a generous 30 ms).
    for (got, r) in at.iter().zip(&records) {
        let want = ((r >> 16) as f64 - first_us) / 1e6 / speed;
        assert!((got - want).abs() < 0.030, "at {got:.4} s, due {want:.4} s");
    }
    // The burst's quarter-second holds its 60 requests.
    let in_burst = at
        .iter()
        .filter(|&&t| (0.5..0.75).contains(&(t + first_us / 1e6 / speed)));
    assert!((57..=60).contains(&in_burst.count()));
}

#[test]
fn a_pool_carries_the_trace_on_its_connections() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let (records, per_second) = burst();
    let schedule = write_schedule("pool", &records);
    let mut p = trace_plan(srv.port, &schedule, records.len(), 2.0);
    p["model"]["pool"] = json!(4);
    p["threads"] = json!(2);
    let r = run(&p);
    assert_mix(&r, &srv, &records);
    assert_eq!(total(&r, "connections_opened"), 4);
    let by_second: BTreeMap<usize, u64> = arrivals(&r).into_iter().enumerate().collect();
    assert_eq!(by_second[&0], per_second[0] + per_second[1]);
}

#[test]
fn load_hosts_share_the_schedule_with_nothing_lost_or_twice() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let (records, _) = burst();
    let schedule = write_schedule("hosts", &records);
    let mut sent = vec![0u64; 3];
    let mut by_second = [0u64; 4];
    for first in 0..3 {
        let mut p = trace_plan(srv.port, &schedule, records.len(), 4.0);
        p["model"]["first"] = json!(first);
        p["model"]["stride"] = json!(3);
        p["threads"] = json!(2);
        let r = run(&p);
        assert_accounting(&r);
        for (a, b) in sent.iter_mut().zip(per_kind_sent(&r)) {
            *a += b;
        }
        for (a, b) in by_second.iter_mut().zip(arrivals(&r)) {
            *a += b;
        }
    }
    assert_eq!(sent.iter().sum::<u64>(), records.len() as u64);
    assert_eq!(by_second.iter().sum::<u64>(), records.len() as u64);
    for (path, n) in KINDS.iter().zip(&sent) {
        assert_eq!(srv.counts.path(path), *n, "{path}");
    }
}

#[test]
fn a_schedule_naming_a_kind_the_plan_lacks_is_refused() {
    let schedule = write_schedule("badkind", &[7]);
    let mut p = trace_plan(closed_port(), &schedule, 1, 1.0);
    p["requests"] = json!([p["requests"][0]]);
    let e = wsgibench_engine::run_value(&p).unwrap_err().to_string();
    assert!(e.contains("names request kind 7"), "{e}");
}

fn closed_port() -> u16 {
    TestServer::closed_port()
}

#[test]
fn both_backends_count_a_trace_with_bad_replies_alike() {
    let (records, per_second) = burst();
    let schedule = write_schedule("both", &records);
    let [epoll, uring] = ["epoll", "io_uring"].map(|io| {
        let srv = TestServer::start(|seq, _| match seq % 10 {
            3 => Action::Status500,
            6 => Action::WrongBody,
            _ => Action::Reply,
        });
        let mut p = trace_plan(srv.port, &schedule, records.len(), 4.0);
        p["engine_io"] = json!(io);
        let r = run(&p);
        assert_eq!(r["cost"]["io_backend"], io, "{}", r["cost"]);
        assert_accounting(&r);
        let kinds = per_kind_sent(&r);
        (
            r["totals"]["ok"].clone(),
            r["totals"]["errors"].clone(),
            kinds,
            arrivals(&r),
        )
    });
    assert_eq!(epoll.0, 80, "{:?}", epoll);
    assert_eq!(epoll.3[0], per_second.iter().sum::<u64>());
    assert_eq!(epoll, uring, "epoll (left) and io_uring (right) differ");
}
