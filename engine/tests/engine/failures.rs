//! Failed requests in the latency, a re-send's deadline, and each thread's CPUs read back: what
//! the engine did, checked against what the test server did and the machine holds.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;

/// Every `every`-th request the server receives (counted over all connections) stalls; the rest
/// are answered at once. Returns the policy and the count of stalled requests.
fn stall_every(
    every: u64,
) -> (
    impl Fn(u64, &Req) -> Action + Send + Sync + 'static,
    Arc<AtomicU64>,
) {
    let seen = Arc::new(AtomicU64::new(0));
    let stalled = Arc::new(AtomicU64::new(0));
    let (s, st) = (Arc::clone(&seen), Arc::clone(&stalled));
    let policy = move |_: u64, _: &Req| {
        if (s.fetch_add(1, Ordering::SeqCst) + 1) % every == 0 {
            st.fetch_add(1, Ordering::SeqCst);
            Action::Stall
        } else {
            Action::Reply
        }
    };
    (policy, stalled)
}

#[test]
fn timed_out_requests_are_in_the_latency_at_their_timeout() {
    // 1 request in 20 never answered (5 %, timeout 0.2 s): the p99 of every request sent falls
    // on the timed-out ones, at least the timeout; the replies' own p99 stays fast.
    let (policy, stalled) = stall_every(20);
    let srv = TestServer::start(policy);
    let mut p = plan(
        srv.port,
        json!({"kind": "count", "requests": 400, "concurrency": 8}),
    );
    p["timeout_s"] = json!(0.2);
    let r = run(&p);
    assert_accounting(&r);
    let timeouts = err(&r, "timeout");
    assert_eq!(timeouts, stalled.load(Ordering::SeqCst), "{}", r["totals"]);
    assert!(timeouts >= 19, "{timeouts} stalled");
    let k = &r["kinds"][0];
    let failed = &k["failed_latency_us"];
    assert_eq!(failed["count"].as_u64().unwrap(), timeouts);
    assert!(failed["min"].as_u64().unwrap() >= 199_000, "{failed}");
    assert!(
        k["latency_us"]["p99"].as_u64().unwrap() >= 199_000,
        "{}",
        k["latency_us"]
    );
    assert!(
        k["reply_latency_us"]["p99"].as_u64().unwrap() < 100_000,
        "{}",
        k["reply_latency_us"]
    );
    assert_eq!(
        k["latency_us"]["count"].as_u64().unwrap(),
        k["responses"].as_u64().unwrap() + timeouts
    );
}

#[test]
fn a_resent_request_keeps_the_deadline_of_its_first_send() {
    // The first request is answered and the connection then closed silently 100 ms after the
    // second arrives; the second, re-sent on a new connection, is never answered. Its timeout
    // (0.5 s) counts from its first send: it fails 0.5 s after it, not 0.5 s after the re-send.
    let seen = Arc::new(AtomicU64::new(0));
    let s = Arc::clone(&seen);
    let srv = TestServer::start(move |_: u64, _: &Req| {
        if s.fetch_add(1, Ordering::SeqCst) == 0 {
            Action::ReplyThenLateFin
        } else {
            Action::Stall
        }
    });
    let mut p = plan(
        srv.port,
        json!({"kind": "count", "requests": 2, "concurrency": 1}),
    );
    p["timeout_s"] = json!(0.5);
    let t0 = std::time::Instant::now();
    let r = run(&p);
    let took = t0.elapsed();
    assert_eq!(
        (total(&r, "ok"), err(&r, "timeout"), total(&r, "resent")),
        (1, 1, 1),
        "{}",
        r["totals"]
    );
    let failed = &r["kinds"][0]["failed_latency_us"];
    let at = failed["max"].as_u64().unwrap();
    assert!(
        (480_000..580_000).contains(&at),
        "timed out {at} µs after its first send"
    );
    assert!(took < Duration::from_millis(1_500), "{took:?}");
}

#[test]
fn each_thread_reads_its_cpus_back_and_a_cpu_that_does_not_exist_fails_before_load() {
    let srv = TestServer::start(|_, _| Action::Reply);
    let online: Vec<usize> = (0..num_cpus()).collect();
    let mut p = plan(
        srv.port,
        json!({"kind": "count", "requests": 200, "concurrency": 2}),
    );
    p["cpus"] = json!(online);
    p["threads"] = json!(online.len());
    let r = run(&p);
    let got: Vec<Vec<u64>> = r["cost"]["thread_cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["cpus"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_u64().unwrap())
                .collect()
        })
        .collect();
    let want: Vec<Vec<u64>> = online.iter().map(|&c| vec![c as u64]).collect();
    assert_eq!(got, want, "one CPU per thread, as the kernel holds it");
    // A CPU that does not exist: alone the kernel refuses it; beside one that exists, the
    // kernel drops it silently, and the read-back catches that. Either way nothing is sent.
    for cpus in [json!([1000]), json!([0, 1000])] {
        let mut bad = plan(
            srv.port,
            json!({"kind": "count", "requests": 10, "concurrency": 1}),
        );
        bad["cpus"] = cpus.clone();
        let before = srv.counts.requests.load(Ordering::SeqCst);
        let e = wsgibench_engine::run_value(&bad).expect_err("pinned to a CPU that does not exist");
        assert!(e.to_string().contains("engine pinning"), "{cpus}: {e}");
        assert_eq!(
            srv.counts.requests.load(Ordering::SeqCst),
            before,
            "{cpus}: a request went out"
        );
    }
}

fn num_cpus() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4)
}
